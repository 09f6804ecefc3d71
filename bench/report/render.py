"""Renderers of a built table: LaTeX (booktabs), Markdown (pipe table + footnotes) and CSV (numbers)."""
from __future__ import annotations

import re
import unicodedata

from bench.report.convergence import MARKS, NOT_CONVERGED, UNKNOWN, UNSTABLE
from bench.report.tables import SUPERSCRIPTS, BuiltTable

# Unicode the tables use, as LaTeX that compiles with pdflatex and no extra package.
_LATEX_TOKENS = {
    "λ_WCC": r"$\lambda_{\mathrm{WCC}}$", "Δ_Raw": r"$\Delta_{\mathrm{Raw}}$", "zRᵀ": r"$zR^{\top}$",
    "—": "---", "−": "$-$", "±": r"$\pm$", "×": r"$\times$", "↑": r"$\uparrow$", "↓": r"$\downarrow$",
    "λ": r"$\lambda$", "Δ": r"$\Delta$", "σ": r"$\sigma$", "α": r"$\alpha$", "ᵀ": r"$^{\top}$",
    "ρ": r"$\rho$", "τ": r"$\tau$", "Σ": r"$\Sigma$", "½": r"$\frac{1}{2}$", "·": r"$\cdot$",
    "…": r"\ldots{}", "’": "'", "–": "--",
    MARKS[NOT_CONVERGED]: r"\textsuperscript{\dag}", MARKS[UNSTABLE]: r"\textsuperscript{\ddag}",
    MARKS[UNKNOWN]: r"\textsuperscript{$\circ$}",
}
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
_SUPERSCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_TOKEN_RE = re.compile(
    "|".join(re.escape(t) for t in sorted({**_LATEX_TOKENS, **_LATEX_SPECIAL}, key=len, reverse=True))
    + f"|[{_SUPERSCRIPT_DIGITS}]+"
    + r"|[^\x00-\x7f]"
)


def latex_escape(text: str) -> str:
    """``text`` as LaTeX: special characters escaped, the tables' Unicode symbols as math.

    Superscript digits (footnote marks) become ``\\textsuperscript{n}``; any other non-ASCII
    character (a stored note may hold one) becomes its ASCII base letter, or ``?``, so that the
    output always compiles with pdflatex and booktabs alone.
    """
    def replace(match: re.Match) -> str:
        token = match.group(0)
        if token[0] in _SUPERSCRIPT_DIGITS:
            return r"\textsuperscript{" + "".join(str(_SUPERSCRIPT_DIGITS.index(c)) for c in token) + "}"
        if token in _LATEX_TOKENS or token in _LATEX_SPECIAL:
            return _LATEX_TOKENS.get(token) or _LATEX_SPECIAL[token]
        if unicodedata.combining(token):
            return ""
        return unicodedata.normalize("NFKD", token).encode("ascii", "ignore").decode() or "?"

    return _TOKEN_RE.sub(replace, str(text))


def _notes(built: BuiltTable) -> list[str]:
    """Footnotes (numbered), how to read the floor row and worst-case column, then what the results
    lack and what the suite cannot map."""
    lines = [f"{str(i).translate(SUPERSCRIPTS)} {note}" for i, note in enumerate(built.footnotes, 1)]
    lines += built.notes
    if built.missing:
        lines.append("Not in the results: " + "; ".join(built.missing) + ".")
    if built.spec.unmapped:
        lines.append("Not mapped: " + built.spec.unmapped)
    return lines


def to_markdown(built: BuiltTable) -> str:
    """A Markdown pipe table with its caption above and its footnotes below."""
    labels, n_factors = list(built.body.columns), built.n_factors
    out = [f"**{built.caption}**", ""]
    if built.body.empty:
        out.append("_No stored cell has data for this table._")
    else:
        cell = lambda s: str(s).replace("|", r"\|")  # noqa: E731
        out.append("| " + " | ".join(cell(c) for c in labels) + " |")
        out.append("| " + " | ".join("---" if i < n_factors else "---:" for i in range(len(labels))) + " |")
        out.extend("| " + " | ".join(cell(v) for v in row) + " |" for row in built.body.itertuples(index=False))
    notes = _notes(built)
    return "\n".join(out + ([""] + notes if notes else [])) + "\n"


def to_latex(built: BuiltTable, *, standalone: bool = False) -> str:
    """A booktabs ``table`` environment; ``standalone`` wraps it in a minimal compilable document."""
    header, n_factors = built.header, built.n_factors
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\caption{" + latex_escape(built.caption) + "}",
             r"\label{tab:" + built.spec.name + "}"]
    if built.body.empty:
        lines.append(r"\emph{No stored cell has data for this table.}\par")
    else:
        lines += [r"\begin{tabular}{" + "l" * n_factors + "r" * (len(header) - n_factors) + "}", r"\toprule"]
        groups = _runs([g for g, _ in header])
        if any(g for g, _, _ in groups):
            lines.append(" & ".join(
                (r"\multicolumn{" + f"{end - start}" + "}{c}{" + latex_escape(g) + "}") if g and end - start > 1
                else latex_escape(g) if g else " & ".join([""] * (end - start))
                for g, start, end in groups
            ) + r" \\")
            lines.append(" ".join(rf"\cmidrule(lr){{{s + 1}-{e}}}" for g, s, e in groups if g))
        lines.append(" & ".join(latex_escape(label) for _, label in header) + r" \\")
        lines.append(r"\midrule")
        lines += [" & ".join(latex_escape(v) for v in row) + r" \\" for row in built.body.itertuples(index=False)]
        lines += [r"\bottomrule", r"\end{tabular}"]
    notes = _notes(built)
    if notes:
        lines += [r"\par\smallskip", r"\begin{minipage}{\linewidth}\footnotesize"]
        lines += [latex_escape(n) + (r"\\" if i < len(notes) - 1 else "") for i, n in enumerate(notes)]
        lines.append(r"\end{minipage}")
    lines.append(r"\end{table}")
    body = "\n".join(lines) + "\n"
    if not standalone:
        return body
    return ("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + body + "\\end{document}\n")


def to_csv(built: BuiltTable) -> str:
    """The numbers behind the table: one line per shown (row, attack, metric): mean, ci, n, Δ columns."""
    return built.numbers.to_csv(index=False)


def _runs(groups: list[str]) -> list[tuple[str, int, int]]:
    """Consecutive runs of equal group labels as ``(label, start, end)`` (end exclusive)."""
    runs: list[tuple[str, int, int]] = []
    for i, g in enumerate(groups):
        if runs and runs[-1][0] == g and g:
            runs[-1] = (g, runs[-1][1], i + 1)
        else:
            runs.append((g, i, i + 1))
    return runs


RENDERERS = {"latex": to_latex, "markdown": to_markdown, "csv": to_csv}
