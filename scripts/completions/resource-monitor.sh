# shellcheck shell=bash
# bash completion for resource-monitor.sh, rm-monitor(1) under the seed's
# name: the same completion, from the rm-monitor file beside this one (bash
# loads a completion by the command's name).
# shellcheck source-path=SCRIPTDIR source=rm-monitor
source "${BASH_SOURCE[0]%/*}/rm-monitor"
