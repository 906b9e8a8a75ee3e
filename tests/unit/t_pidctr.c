/*
 * t_pidctr: per-PID counters kept only while some are pending; removal
 * shifts back along the chain, so every entry stays found whatever was
 * taken out before it, and the table shrinks again after a storm; the
 * records of a PID's older process are told from the new one's in every
 * order the two sockets can give them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static size_t asked;

static int keep_not_third(struct rm_pidctr_e *e, void *arg)
{
	(void)arg;
	asked++;
	return e->pid % 3 != 0;
}

/* Random PIDs fill a table to its load limit, so chains run past its end
 * and back: a sweep takes out every third, whatever moves where. */
static void sweep_of_chains_that_wrap_round(void)
{
	static int ref[PIDS];
	int ok = 1;

	srand(11);
	for (int round = 0; round < 50 && ok; round++) {
		struct rm_pidctr m = { 0 };
		size_t n0;
		for (int pid = 1; pid < PIDS; pid++)
			ref[pid] = 0;
		while (m.n < 1000) {
			int pid = 1 + rand() % (PIDS - 1);
			struct rm_pidctr_e *e = rm_pidctr_get(&m, pid);
			if (!e) {
				ok = 0;
				break;
			}
			e->a = ref[pid] = pid;
		}
		n0 = m.n;
		asked = 0;
		rm_pidctr_sweep(&m, keep_not_third, NULL);
		for (int pid = 1; pid < PIDS; pid++)
			if (pid % 3 == 0)
				ref[pid] = 0;
		if (!agrees(&m, ref) || asked < n0)
			ok = 0;
		rm_pidctr_free(&m);
	}
	CHECK(ok);
}

/*
 * What the proc connector and taskstats give, in the order read, for a
 * process X that ends on PID 300 while Y takes the PID: 'x' X's exit
 * event; 'f' Y's fork read (Y takes the counts); records 'L' a main
 * thread's last (pid == tgid, AGROUP), 'l' a main thread's not last,
 * 'F' another thread's last; 'y' Y's own last record, a main thread's.
 * Returns the records Y passed over as a string ("L", "lF"...), and
 * whether Y took its own.
 */
static int replay(const char *seq, char *passed, size_t size)
{
	struct rm_pidctr m = { 0 };
	struct rm_older o = { 0, 0 };
	int forked = 0, own = 0;
	size_t n = 0;

	for (const char *c = seq; *c; c++) {
		int lead = *c == 'L' || *c == 'l' || *c == 'y', final = *c != 'l';
		if (*c == 'x') {
			rm_pidctr_exit(&m, 300, 0);
		} else if (*c == 'f') {
			rm_older_take(&o, &m, 300);
			forked = 1;
		} else {
			rm_pidctr_record(&m, 300, lead, final, 0);
			if (forked && rm_older_pass(&o, lead, final)) {
				if (n + 1 < size)
					passed[n++] = *c;
			} else if (forked && *c == 'y') {
				own = 1;
			}
		}
	}
	passed[n] = '\0';
	/* Y's own exit: then nothing of either is pending. */
	rm_pidctr_exit(&m, 300, 0);
	own = own && m.n == 0;
	rm_pidctr_free(&m);
	return own;
}

static void a_pids_older_records_are_passed_over_in_any_order(void)
{
	static const struct {
		const char *seq, *passed;
	} cases[] = {
		/* one thread: its record before or after Y's fork */
		{ "xLfy", "" },
		{ "xfLy", "L" },
		{ "Lxfy", "" },
		/* the main thread ended first (pthread_exit): its record, and the
		 * last one from a thread, on either side of the fork */
		{ "xlFfy", "" },
		{ "xlfFy", "F" },
		{ "xflFy", "lF" },
		/* the last thread's record came before the main thread's */
		{ "xFlfy", "" },
		{ "xfFly", "Fl" },
		{ "xFfly", "l" },
		/* an exec from a thread: the old main thread ends, then the
		 * process, both main threads' exits read before the fork */
		{ "xxlLfy", "" },
		{ "xxflLy", "lL" },
		{ "xxlfLy", "L" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char passed[16];
		int own = replay(cases[i].seq, passed, sizeof(passed));
		if (!own || strcmp(passed, cases[i].passed) != 0)
			printf("#   %s: passed over '%s' (want '%s'), own record %s\n", cases[i].seq,
			       passed, cases[i].passed, own ? "taken" : "NOT taken");
		CHECK(own);
		CHECK_STR(passed, cases[i].passed);
	}
}

int main(void)
{
	RUN(random_adds_and_removals_agree_with_an_array);
	RUN(sweep_takes_out_what_keep_refuses_and_shrinks);
	RUN(sweep_of_chains_that_wrap_round);
	RUN(a_pids_older_records_are_passed_over_in_any_order);
	return tap_done();
}
