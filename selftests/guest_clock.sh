#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The clock every test and benchmark in the guest reads.
#
# - The clocksource is one the vDSO reads (tsc, kvm-clock, the Hyper-V
#   page), not the HPET or the ACPI PM timer.  Under TCG with two vCPUs
#   the guest's boot-time check used to find the TSC unsynchronized and
#   fall back to the HPET: every clock read was then an emulated device
#   access through a system call (1.6 us a read against 77 ns with the
#   TSC), and 1Pipe reads the clock for every packet, so each timing in
#   the guest measured the emulator's HPET.  tools/vm/run boots with
#   tsc=reliable.
# - CLOCK_MONOTONIC never goes back between CPUs (clock_check, 2 s of
#   reads taking turns on every CPU): that is what tsc=reliable takes on
#   trust, and what a host's 1Pipe stamps need.
source "$(dirname "$0")/lib.sh"

CS_FILE=/sys/devices/system/clocksource/clocksource0/current_clocksource
P_CS="clocksource is one the vDSO reads"
P_MONO="CLOCK_MONOTONIC never goes back between CPUs"

tap_plan "$P_CS" "$P_MONO"

cs=$(cat "$CS_FILE" 2>/dev/null) || cs=
case "$cs" in
tsc | kvm-clock | hyperv_clocksource_tsc_page)
	tap_pass "$P_CS" "$cs" ;;
*)
	diag "available: $(cat "${CS_FILE%/*}/available_clocksource" 2>/dev/null)"
	tap_fail "$P_CS" "${cs:-none}" ;;
esac

out=$("$TOP/selftests/clock_check" 2000 2>&1)
rc=$?
diag "clock_check: $out"
if [ "$rc" = 0 ]; then
	tap_pass "$P_MONO" "$out"
else
	tap_fail "$P_MONO" "exit $rc: $out"
fi
