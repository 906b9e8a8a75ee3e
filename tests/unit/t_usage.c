/*
 * t_usage: what lib/usage decides from the proc root's mount (hidepid),
 * on mountinfo text as the kernel prints it, old numeric options and
 * new words alike.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tick.h"
#include "usage.h"

static int mode(const char *text, const char *point)
{
	return rm_usage_hidepid_parse(text, strlen(text), point);
}

/* The mode follows the mount at the proc root, the last one there. */
static void test_hidepid_of_the_proc_root(void)
{
	const char *mi =
		"22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
		"66 46 0:40 / /tmp/p2 rw,relatime - proc proc rw,hidepid=invisible\n"
		"67 46 0:41 / /tmp/p1 rw,relatime - proc proc rw,hidepid=noaccess\n"
		"68 46 0:42 / /tmp/p4 rw,relatime - proc proc rw,hidepid=ptraceable,subset=pid\n"
		"69 46 0:43 / /tmp/old rw,relatime - proc proc rw,hidepid=2,gid=10\n"
		"70 46 0:44 / /tmp/stack rw,relatime - proc proc rw,hidepid=2\n"
		"71 70 0:45 / /tmp/stack rw,relatime - proc proc rw\n"
		"72 46 0:46 / /tmp/tmpfs rw,relatime - tmpfs tmpfs rw,hidepid=2\n"
		"73 46 0:47 / /tmp/odd rw,relatime - proc proc rw,xhidepid=2\n";

	CHECK(mode(mi, "/proc") == 0);
	CHECK(mode(mi, "/tmp/p2") == 2);
	CHECK(mode(mi, "/tmp/p1") == 1);
	CHECK(mode(mi, "/tmp/p4") == 4);
	CHECK(mode(mi, "/tmp/old") == 2);
	CHECK(mode(mi, "/tmp/stack") == 0);    /* the top mount has none */
	CHECK(mode(mi, "/tmp/tmpfs") == -1);   /* not a proc */
	CHECK(mode(mi, "/tmp/odd") == 0);
	CHECK(mode(mi, "/nowhere") == -1);
	CHECK(mode("", "/proc") == -1);
}

/* In steps: a scan stopped by the clock goes on where it stopped and
 * ends with the same members as one whole scan. */
static void test_steps_stop_at_the_deadline_and_go_on(void)
{
	struct rm_usage u;
	struct rm_buf b = { 0 };
	int me = (int)getpid(), r, steps = 0, whole;
	char want[32];

	whole = rm_usage_begin(&u, &me, 1, 0, RM_USAGE_ANY_UID);
	rm_usage_free(&u);
	CHECK(whole >= 1);
	CHECK(rm_usage_start(&u, &me, 1, 0, RM_USAGE_ANY_UID) == 0);
	/* A deadline already past: at most 16 processes a step. */
	while ((r = rm_usage_scan(&u, rm_now_mono() - 1)) == 0)
		steps++;
	CHECK(r == 1);
	CHECK(steps >= 1);
	CHECK_U64(u.members, (unsigned long long)whole);
	while (rm_usage_read(&u, rm_now_mono() - 1) == 0)
		;
	rm_usage_end(&u, "t", 0.5, &b);
	snprintf(want, sizeof(want), "\"pid\":%d,", me);
	CHECK(b.p && strstr(b.p, want) != NULL);
	rm_buf_free(&b);
	/* A peer with no uid under hidepid: nothing is read at all. */
	CHECK(rm_usage_start(&u, &me, 1, 0, RM_USAGE_NO_UID) == 0);
	CHECK(rm_usage_scan(&u, 0) == 1 && u.members == 0);
	rm_usage_end(&u, "t", 0.5, &b);
	CHECK(b.p && strstr(b.p, "\"processes\":[]") != NULL);
	rm_buf_free(&b);
}

int main(void)
{
	RUN(test_hidepid_of_the_proc_root);
	RUN(test_steps_stop_at_the_deadline_and_go_on);
	return tap_done();
}
