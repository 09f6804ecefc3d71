"""A synthetic dataset shaped like UCI HAR (561 features, 6 activities, subject ids), for tests."""
import numpy as np
import torch

from bench.data.types import ArraySplit, RawDataset

SUBJECTS, ACTIVITIES, FEATURES = 8, 6, 561


def _synthetic_har(per_activity: int, seed: int) -> ArraySplit:
    """Windows stored subject by subject, activity by activity (as in the UCI files); features are
    subject offset + activity offset + unit noise, so both probes have signal."""
    rng = np.random.default_rng(seed)
    subject_offset = rng.normal(0, 1, (SUBJECTS, FEATURES))
    activity_offset = rng.normal(0, 1, (ACTIVITIES, FEATURES))
    subjects = np.repeat(np.arange(1, SUBJECTS + 1), ACTIVITIES * per_activity)
    activities = np.tile(np.repeat(np.arange(ACTIVITIES), per_activity), SUBJECTS)
    x = subject_offset[subjects - 1] + activity_offset[activities] + rng.normal(0, 1, (len(subjects), FEATURES))
    return ArraySplit(torch.tensor(x, dtype=torch.float32), torch.tensor(activities), torch.tensor(subjects))


def synthetic_har_dataset(per_activity: int = 16, seed: int = 0) -> RawDataset:
    """Two thirds of the windows as the training split, one third as the test split."""
    windows = _synthetic_har(per_activity=per_activity, seed=seed)
    index = torch.arange(len(windows))
    return RawDataset(
        name="har", num_classes=ACTIVITIES, kind="tabular",
        train=windows.take(index[index % 3 != 0]), test=windows.take(index[index % 3 == 0]),
    )
