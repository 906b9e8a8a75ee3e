/*
 * mtname: a multi-threaded process whose last thread to exit has another
 * name than the process, as rustc's "ctrl-c" thread.  The main thread
 * names itself NAME (PR_SET_NAME, default "rustc"), starts a thread that
 * renames itself "ctrl-c", waits until it has, then ends (pthread_exit),
 * and the thread ends last, after about 0.3 s: taskstats' process record
 * comes with the thread's, named "ctrl-c".  With FILE, the thread ends
 * once FILE exists instead (at most after 5 minutes), so that a test can
 * look at the process while its main thread is a zombie.
 * Usage: mtname [NAME [FILE]]
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static const char *until;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int renamed;

static void *worker(void *arg)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };

	(void)arg;
	prctl(PR_SET_NAME, "ctrl-c", 0, 0, 0);
	pthread_mutex_lock(&mu);
	renamed = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	if (until) {
		ts.tv_nsec = 10 * 1000 * 1000;
		for (int i = 0; i < 30000 && access(until, F_OK) != 0; i++)
			nanosleep(&ts, NULL);
	} else {
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	prctl(PR_SET_NAME, argc > 1 ? argv[1] : "rustc", 0, 0, 0);
	until = argc > 2 ? argv[2] : NULL;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 2;
	pthread_mutex_lock(&mu);
	while (!renamed)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	pthread_exit(NULL);
}
