"""The statistics on result frames: the summary's aggregates, intervals, comparisons, tests, disparity, agreement, cohorts and curves."""
