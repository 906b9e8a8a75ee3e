#!/usr/bin/env bash
# resource-monitor.sh: the seed's name for rm-monitor, so an orchestrator
# written for the seed runs unchanged.  Runs the rm-monitor beside it.
set -u
exec "$(dirname "${BASH_SOURCE[0]}")/rm-monitor" "$@"
