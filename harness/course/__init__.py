"""Course-staff orchestration of grading: one submission (grade_one), a class in batch
on a local or Dask cluster (batch, cluster, packing), the sealed staging and build of
a submission (submission_build, sandbox), the test processes' plugins that only the
grader loads (parallel, lifeline), the reports (Gradescope, JUnit, text, gradebook,
class summary, scoreboard), student handouts and the check of a lab in both
directions (handout, labcheck).

It imports privlab.grade (the API lab tests use, the pytest plugin, lab specs and the
results model); privlab.grade never imports it. Import the modules themselves:
`from privlab.course.grade_one import GradeOptions, grade`.
"""

__all__: list[str] = []
