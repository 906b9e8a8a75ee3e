/*
 * spawn_tiny: the smallest process there is, for the exact-rate bench:
 * no libc, no dynamic loader, exit(0) from _start.  Built with
 * cc -O2 -static -nostdlib (x86_64 and aarch64).
 */
void _start(void)
{
#if defined(__x86_64__)
	__asm__ volatile("mov $60, %eax\n\txor %edi, %edi\n\tsyscall");
#elif defined(__aarch64__)
	__asm__ volatile("mov x8, #93\n\tmov x0, #0\n\tsvc #0");
#else
#error "spawn_tiny: x86_64 or aarch64"
#endif
	for (;;)
		;
}
