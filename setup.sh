#!/usr/bin/env bash
# Set up epochtrail in ./.venv: checks Java 17+ (Spark needs it), installs the
# pinned packages. `bash setup.sh` for the tool, `bash setup.sh --dev` for the
# tool plus what the tests need; `--airflow` adds the scheduled audit's extra
# (dags/), alone or with `--dev`. Safe to run again: it only reinstalls when
# pyproject.toml or constraints.txt changed.
#
# The lock: constraints.txt pins every package beneath the direct ones (numpy,
# jinja2, pydantic, Airflow's dependencies) for Python 3.11, compiled from
# pyproject.toml with all extras, so a clone installs the versions that were
# tested. Refresh it after changing a dependency in pyproject.toml with
#     bash setup.sh --lock
# (runs `uv pip compile` from a throwaway venv; commit the new constraints.txt).
set -euo pipefail
cd "$(dirname "$0")"

# versions of the installers themselves: part of what was tested
PIP_VERSION="26.3"
UV_VERSION="0.13.8"

extras=()
lock=false
for arg in "$@"; do
  case "$arg" in
    --dev) extras+=(dev) ;;
    --airflow) extras+=(airflow) ;;
    --lock) lock=true ;;
    *)
      echo "usage: bash setup.sh [--dev] [--airflow] | --lock" >&2
      exit 2
      ;;
  esac
done
extra=""
if [ "${#extras[@]}" -gt 0 ]; then
  extra="[$(IFS=,; echo "${extras[*]}")]"
fi

python=""
for candidate in python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)'; then
    python="$candidate"; break
  fi
done
if [ -z "$python" ]; then
  echo "epochtrail needs Python 3.11 (python3.11 or python3 on PATH)." >&2
  exit 1
fi

if $lock; then
  tool="$(mktemp -d)"
  trap 'rm -rf "$tool"' EXIT
  "$python" -m venv "$tool"
  "$tool/bin/python" -m pip install --quiet "uv==$UV_VERSION"
  # --universal: markers instead of this machine's platform, so the lock also
  # serves macOS developers; every extra, so one file constrains each set
  "$tool/bin/uv" pip compile pyproject.toml --all-extras --universal --python-version 3.11 \
    --custom-compile-command "bash setup.sh --lock" --quiet --output-file constraints.txt
  echo "constraints.txt compiled from pyproject.toml ($(grep -c '==' constraints.txt) pins)."
  exit 0
fi

java_major() {
  local java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
  command -v "$java" >/dev/null 2>&1 || return 1
  "$java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2/p' | head -n 1 |
    awk '{ print ($1 == 1 ? $2 : $1) }'
}
major="$(java_major || true)"
if [ -z "$major" ] || [ "$major" -lt 17 ]; then
  echo "epochtrail needs Java 17 or newer (Spark 4 runs on the JVM); found: ${major:-none}." >&2
  echo "Install it, e.g. 'apt-get install -y openjdk-17-jre-headless' (Debian/Ubuntu)" >&2
  echo "or 'brew install openjdk@17' (macOS), then set JAVA_HOME and run this again." >&2
  exit 1
fi

[ -x .venv/bin/python ] || "$python" -m venv .venv
stamp=".venv/.epochtrail-installed${extra}"
want="$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet "pip==$PIP_VERSION"
  .venv/bin/python -m pip install --quiet --constraint constraints.txt -e ".${extra}"
  echo "$want" > "$stamp"
fi
# Spark's classes archived for the driver JVM (pipeline/classarchive.py): built
# once per Java and set of Spark jars by running the bundled incident (about
# 40 s); every later Spark start maps it instead of loading ~25,000 classes
# from their jars (the demo's start 5.0 s -> 3.0 s). Without it everything
# works as before, only slower to start; EPOCHTRAIL_CLASS_ARCHIVE=off skips it.
mkdir -p .venv/var/epochtrail
if ! .venv/bin/python -m pipeline.classarchive 2> .venv/var/epochtrail/build.log; then
  echo "note: the class archive was not built (see .venv/var/epochtrail/build.log);" >&2
  echo "      Spark starts without it." >&2
fi
# --dev: headless Chromium for tests/test_report_browser.py (the report as a
# browser builds it). Installed with apt-get where that works (Debian/Ubuntu
# as root, as in CI); anywhere else the test is skipped, and says so.
if [[ " ${extras[*]:-} " == *" dev "* ]] && ! command -v chromium >/dev/null 2>&1 &&
   ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 &&
        apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; } ||
      echo "note: could not install chromium with apt-get; the browser test will be skipped." >&2
  else
    echo "note: no headless Chromium (install Debian's 'chromium' package, which needs apt-get" >&2
    echo "and root); tests/test_report_browser.py will be skipped until then." >&2
  fi
fi
echo "epochtrail is set up in .venv${extra:+ with $extra} (Java $major, $(.venv/bin/python --version))."
