"""Every lab's tests (and labs/base, and the hidden tests in labs/*/hidden/) run with
privlab's pytest plugin: its fixtures (privlab_kernel, privlab_rng, privlab_images),
its markers (points, requires, visibility) and its result recording.

Installing privlab does not load the plugin into every pytest run on the machine;
this line does, for the tests under labs/. `privlab grade` also passes
`-p privlab.grade.plugin`, so hidden tests kept anywhere else need no conftest.py."""

pytest_plugins = ["privlab.grade.plugin"]
