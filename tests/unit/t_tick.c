/*
 * lib/tick: what a wake on extra_fd (rm-energy's SIGCHLD pipe) does to the
 * deadlines and the count.  No timing is measured: the interval is long
 * enough (1000 s) that only the pipe can end a wait.
 */
#include <fcntl.h>
#include <unistd.h>

#include "tick.h"
#include "tap.h"

/* An early wake is not a tick: neither a deadline nor the count is used. */
static void extra_fd_wake_is_not_a_tick(void)
{
	struct rm_tick t;
	int p[2];

	CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
	CHECK(rm_tick_init(&t, 1000, 2, 0) == 0);
	t.extra_fd = p[0];
	CHECK(rm_tick_next(&t) == 1); /* the first tick: at once */
	CHECK(t.done == 1 && t.slot == 1);
	CHECK(write(p[1], "x", 1) == 1);
	CHECK(rm_tick_next(&t) == 2); /* the pipe, long before the deadline */
	CHECK(t.done == 1 && t.slot == 1);
	CHECK(rm_tick_sleep_until(&t, 1000) == 2);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	RUN(extra_fd_wake_is_not_a_tick);
	return tap_done();
}
