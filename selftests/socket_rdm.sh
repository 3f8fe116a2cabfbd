#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The SOCK_RDM socket tests (socket_rdm.c), run like socket_api.
OP_SOCKET_TESTS=socket_rdm exec "$(dirname "$0")/socket_api.sh" "$@"
