# Sourced by .ci/run and .ci/newest: the Python versions the project supports, and where this
# machine has each (on PATH as pythonX.Y, else under pyenv's root even when not activated).
SUPPORTED_PYTHONS=(3.11 3.12 3.13)

# find_python X.Y: print the path of a working pythonX.Y, or nothing.
find_python() {
    local version=$1 candidate
    for candidate in "$(command -v "python$version" 2>/dev/null)" \
        "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version"*/bin/"python$version"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c "" >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}
