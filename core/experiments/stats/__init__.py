"""The statistics of `compare`, apart from runs and metrics: they take numbers keyed by their unit
(a seed, or anything hashable a caller pairs by) and return verdicts.

- `design`: which units two conditions share, the pairs they make and the units dropped;
- `shift`: the permutation tests (sign-flip for pairs, rearrangement for two independent samples),
  exact when the arrangements are few enough to enumerate, with the interval of shifts each test
  does not reject (so interval and test always agree);
- `signed_rank`: Wilcoxon's signed-rank test (`scipy.stats.wilcoxon`) as the other paired test;
- `effects`: standardized effect sizes (d_z for pairs, Hedges' g for independent samples) with their
  noncentral-t intervals, and the seeds needed for 80% power in the design used;
- `multiplicity`: Holm's and Benjamini–Hochberg's adjustments across a family of tests;
- `rows`: one row per metric and pair of conditions, all of the above together, adjusted across the table;
- `factorial`: main effects and interaction of a two-factor sweep (`statsmodels`).

Imports numpy, scipy and statsmodels lazily (a command that never compares never pays for them);
never imports anything of Promptdesk but this package. Its matrices are tiny, so the linear algebra
library is asked for one thread (`OPENBLAS_NUM_THREADS`, unless set already, read when numpy loads):
on a busy machine OpenBLAS's own threads made one 60 × 60 decomposition 70 times slower.
"""

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
