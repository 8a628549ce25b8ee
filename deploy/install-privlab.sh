#!/bin/sh
# Install privlab into its own virtual environment, from a clone of your course's
# privlab repository. Safe to run any number of times: a second run fetches the
# repository again and reinstalls only if it changed, so a GitHub Classroom job whose
# every test repeats its set-up command pays for the install once.
#
#   PRIVLAB_REPO    the repository to clone (your fork, with your labs)   [required]
#   PRIVLAB_REF     branch or tag to install (default: the repository's default branch)
#   PRIVLAB_HOME    where it goes (default: ~/.privlab): src/, the clone, and venv/,
#                   the virtual environment. (The recipes also point PRIVLAB_CACHE,
#                   privlab's build cache, at $PRIVLAB_HOME/cache, to keep it with them.)
#   PRIVLAB_PYTHON  the Python to make the venv with, 3.11 or newer (default: python3)
#
# Nothing is installed into the system Python, so PEP 668 ("externally-managed-
# environment") never applies. The command to grade with is $PRIVLAB_HOME/venv/bin/privlab.
set -eu

: "${PRIVLAB_REPO:?set PRIVLAB_REPO to the git URL of your course's privlab repository}"
home=${PRIVLAB_HOME:-$HOME/.privlab}
python=${PRIVLAB_PYTHON:-python3}
src=$home/src
venv=$home/venv
mkdir -p "$home"

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "install-privlab: $python is not Python 3.11 or newer" >&2
    exit 1
fi

# The clone: fetched again if it is there (a second run, or a restored cache), else made.
if [ -d "$src/.git" ] && git -C "$src" fetch --quiet --depth 1 origin "${PRIVLAB_REF:-HEAD}"; then
    git -C "$src" checkout --quiet --force FETCH_HEAD
else
    rm -rf "$src"
    git clone --quiet --depth 1 ${PRIVLAB_REF:+--branch "$PRIVLAB_REF"} "$PRIVLAB_REPO" "$src"
fi
commit=$(git -C "$src" rev-parse HEAD)

# The venv: made again if missing or broken (a cache restored on another Python).
if ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
fi

stamp=$venv/.privlab-installed
if [ "$(cat "$stamp" 2>/dev/null)" = "$commit $src" ] && "$venv/bin/privlab" lab list >/dev/null 2>&1; then
    echo "install-privlab: privlab $commit already installed in $venv"
    exit 0
fi
# Editable: privlab grades with the clone's labs/, kernel/ and userland/.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$src"
echo "$commit $src" > "$stamp"
echo "install-privlab: privlab $commit installed in $venv"
