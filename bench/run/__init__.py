"""Running cells: the cell and the grid, the split-learning engine, training, attack cells, executors, the result store."""
