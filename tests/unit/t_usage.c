/*
 * t_usage: what lib/usage decides from the proc root's mount (hidepid),
 * on mountinfo text as the kernel prints it, old numeric options and
 * new words alike.
 */
#include <string.h>

#include "tap.h"
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

int main(void)
{
	RUN(test_hidepid_of_the_proc_root);
	return tap_done();
}
