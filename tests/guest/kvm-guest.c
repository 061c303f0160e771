// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kvm-guest: the freestanding program kvm-mini runs at CPL3 in a VM with no
 * kernel (-ffreestanding -nostdlib -static -fno-pie: no libc, no syscalls).
 *
 * mini_a, mini_b and mini_c run the same loop for 5:3:2 of the iterations,
 * so they take 50/30/20 % of its time by construction. It says hello on I/O
 * port KVM_GUEST_PORT_HELLO, then loops until the VMM stops it.
 */
#include <stdint.h>

#define KVM_GUEST_PORT_HELLO 0xf1
#define UNIT		     20000

void _start(void);
void mini_a(uint64_t n);
void mini_b(uint64_t n);
void mini_c(uint64_t n);

static volatile uint64_t sink;

/* One dependent multiply-add per iteration: the same cost in every function. */
#define SPIN(n)                                                                                    \
	do {                                                                                       \
		uint64_t x = sink;                                                                 \
		for (uint64_t i = 0; i < (n); i++) {                                               \
			x = x * 6364136223846793005ull + 1442695040888963407ull;                   \
			__asm__ volatile("" : "+r"(x));                                            \
		}                                                                                  \
		sink = x;                                                                          \
	} while (0)

__attribute__((noinline, noipa)) void mini_a(uint64_t n)
{
	SPIN(n);
}

__attribute__((noinline, noipa)) void mini_b(uint64_t n)
{
	SPIN(n);
}

__attribute__((noinline, noipa)) void mini_c(uint64_t n)
{
	SPIN(n);
}

static void outb(uint16_t port, uint8_t val)
{
	/* The VMM gives the guest IOPL 3: at CPL3 this is a KVM_EXIT_IO. */
	__asm__ volatile("outb %0, %1" : : "a"(val), "Nd"(port));
}

__attribute__((noreturn, section(".text.start"))) void _start(void)
{
	outb(KVM_GUEST_PORT_HELLO, 1);
	for (;;) {
		mini_a(5 * UNIT);
		mini_b(3 * UNIT);
		mini_c(2 * UNIT);
	}
}
