/*
 * t_pidctr: per-PID counters kept only while some are pending; removal
 * shifts back along the chain, so every entry stays found whatever was
 * taken out before it, and the table shrinks again after a storm.
 */
#include <stdlib.h>

#include "pidctr.h"
#include "tap.h"

enum { PIDS = 4096 };

/* Every entry m has is the one ref says, and ref's every one is in m. */
static int agrees(const struct rm_pidctr *m, const int *ref)
{
	size_t n = 0;

	for (int pid = 1; pid < PIDS; pid++) {
		const struct rm_pidctr_e *e = rm_pidctr_find(m, pid);
		if (ref[pid] ? (!e || e->a != ref[pid]) : e != NULL)
			return 0;
		n += ref[pid] != 0;
	}
	return n == m->n;
}

static void random_adds_and_removals_agree_with_an_array(void)
{
	struct rm_pidctr m = { 0 };
	static int ref[PIDS];
	int ok = 1;

	srand(7);
	for (int round = 0; round < 200000 && ok; round++) {
		/* Few PIDs, many collisions: multiples of 64 share homes in
		 * small tables. */
		int pid = 1 + (rand() % 60) * 64 % (PIDS - 1);
		if (rand() % 3) {
			struct rm_pidctr_e *e = rm_pidctr_get(&m, pid);
			if (!e || e->pid != pid)
				ok = 0;
			else
				ref[pid] = ++e->a;
		} else {
			rm_pidctr_del(&m, pid);
			ref[pid] = 0;
		}
		if (round % 997 == 0 && !agrees(&m, ref))
			ok = 0;
	}
	CHECK(ok);
	CHECK(agrees(&m, ref));
	rm_pidctr_free(&m);
}

static int keep_even(struct rm_pidctr_e *e, void *arg)
{
	(void)arg;
	return e->a % 2 == 0;
}

static void sweep_takes_out_what_keep_refuses_and_shrinks(void)
{
	struct rm_pidctr m = { 0 };
	static int ref[PIDS];
	int ok = 1;

	for (int pid = 1; pid < PIDS; pid++) {
		struct rm_pidctr_e *e = rm_pidctr_get(&m, pid);
		if (!e)
			ok = 0;
		else
			e->a = ref[pid] = pid % 50 ? pid : 2 * pid;
	}
	CHECK(ok);
	CHECK_U64(m.n, PIDS - 1);
	rm_pidctr_sweep(&m, keep_even, NULL);
	for (int pid = 1; pid < PIDS; pid++)
		if (ref[pid] % 2)
			ref[pid] = 0;
	CHECK(agrees(&m, ref));
	/* Only the odd ones gone: then all but a few. */
	for (int pid = 1; pid < PIDS; pid++)
		if (pid % 50) {
			rm_pidctr_del(&m, pid);
			ref[pid] = 0;
		}
	CHECK(agrees(&m, ref));
	CHECK(m.cap <= 8 * (m.n + 1) * 2);
	rm_pidctr_clear(&m);
	CHECK_U64(m.n, 0);
	CHECK(rm_pidctr_find(&m, 50) == NULL);
	CHECK(rm_pidctr_get(&m, 0) == NULL);
	rm_pidctr_free(&m);
}

int main(void)
{
	RUN(random_adds_and_removals_agree_with_an_array);
	RUN(sweep_takes_out_what_keep_refuses_and_shrinks);
	return tap_done();
}
