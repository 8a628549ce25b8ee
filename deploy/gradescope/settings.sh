# Settings of this autograder, read by setup.sh and run_autograder. Edit the defaults;
# the environment overrides them (the privlab tests run both scripts in a temporary
# directory that way).
: "${PRIVLAB_LAB:=mmap}"                                  # the lab this assignment grades
: "${PRIVLAB_REPO:=https://your.course/privlab.git}"     # your fork, with your labs
: "${PRIVLAB_HOME:=/opt/privlab}"                        # venv, clone and build cache
: "${AUTOGRADER_ROOT:=/autograder}"                      # Gradescope's directory
export PRIVLAB_LAB PRIVLAB_REPO PRIVLAB_HOME AUTOGRADER_ROOT
export PRIVLAB_CACHE="$PRIVLAB_HOME/cache"
