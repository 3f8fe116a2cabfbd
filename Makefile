# SPDX-License-Identifier: GPL-2.0
#
# Top-level build for AF_ONEPIPE.
#
#   make            onepipe.ko and the userspace programs
#   make debug      onepipe.ko for the sanitizer guest kernel, in
#                   .build/debug/kernel (tools/vm/run --debug boots it)
#   make check      fast userspace unit tests of the protocol core and switch
#   make test       everything: unit tests, then the selftests inside the VM
#   make install    module (modules_install) and programs into $(DESTDIR)$(PREFIX)
#
# KDIR defaults to the running kernel's build tree and falls back to the
# newest installed Debian 6.1 headers (the running kernel of our build
# machines refuses modules, so we build for the VM's kernel).

KVER_RUNNING := $(shell uname -r)
KDIR ?= $(firstword $(wildcard /lib/modules/$(KVER_RUNNING)/build) \
	$(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.*-amd64))))
export KDIR

USERSPACE_DIRS := userspace tools
PREFIX ?= /usr/local

.PHONY: all module debug userspace check test install modules_install clean

all: module userspace

module:
	$(MAKE) -C kernel KDIR=$(KDIR)

debug:
	$(MAKE) -C kernel debug

userspace:
	@for d in $(USERSPACE_DIRS); do $(MAKE) -C $$d || exit 1; done

check: userspace
	$(MAKE) -C kernel/core/tests check
	$(MAKE) -C userspace check
	$(MAKE) -C tools check

# run-all installs what it needs and builds first.
test:
	tools/testing/run-all

modules_install:
	$(MAKE) -C kernel KDIR=$(KDIR) modules_install

install: modules_install
	@for d in $(USERSPACE_DIRS); do $(MAKE) -C $$d install PREFIX=$(PREFIX) || exit 1; done

clean:
	$(MAKE) -C kernel KDIR=$(KDIR) clean
	rm -rf .build/debug
	$(MAKE) -C kernel/core/tests clean
	@for d in $(USERSPACE_DIRS); do $(MAKE) -C $$d clean; done
