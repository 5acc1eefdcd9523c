#!/usr/bin/env bash
# Runs the whole suite (`npm test`) with the clock of every process it starts moved to other days:
# a leap day, and the last minutes of a year so the run crosses into the next one. No test may
# depend on the real date; this shows that none does. Arguments replace the default moments
# (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
#
# The clock is moved by Debian's faketime (libfaketime, preloaded into every process the tests
# start: the service, the CLI, Chromium). PostgreSQL's server keeps its own clock, which is why no
# test may rely on `now()` in SQL. The move is an offset from the real time, so the clock keeps
# ticking and every process agrees on it.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v faketime >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "test:any-day: installing faketime (Debian package)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null
  else
    echo "test:any-day: needs faketime: sudo apt-get install faketime" >&2
    exit 1
  fi
fi

moments=("$@")
if [ ${#moments[@]} -eq 0 ]; then moments=(2028-02-29T12:00:00Z 2031-12-31T23:50:00Z); fi

failed=()
for moment in "${moments[@]}"; do
  offset=$(($(date -d "$moment" +%s) - $(date +%s)))
  echo "test:any-day: npm test with the clock at $moment (offset ${offset} s)"
  sign='+'
  [ "$offset" -lt 0 ] && sign=''
  faketime -f "${sign}${offset}" npm test || failed+=("$moment")
done

if ((${#failed[@]})); then
  echo "test:any-day: the suite failed with the clock at: ${failed[*]}" >&2
  exit 1
fi
echo "test:any-day: the suite passed with the clock at: ${moments[*]}"
