#!/bin/sh
# Gradescope runs this once, as root, while it builds the autograder's image, from
# $AUTOGRADER_ROOT/source (where the zip is unpacked). It installs privlab into a venv
# and grades the reference once, so that the build cache in the image is warm and a
# student's grading compiles only what differs from the reference.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/settings.sh"

# A python3 with venv, and git: installed only when missing (Ubuntu 22.04 and 24.04
# images lack python3-venv).
if ! python3 -c 'import ensurepip, venv' 2>/dev/null || ! command -v git >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv git ca-certificates
fi
sh "$here/install-privlab.sh"

warm=$(mktemp -d)
"$PRIVLAB_HOME/venv/bin/privlab" grade "$PRIVLAB_LAB" --submission "$PRIVLAB_HOME/src" \
    --out "$warm" >/dev/null || true
rm -rf "$warm"
