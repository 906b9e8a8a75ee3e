/*
 * container: see container.h.
 */
#include <stdlib.h>
#include <string.h>

#include "container.h"

int rm_ct_is_id(const char *s, size_t len)
{
	if (len != RM_CT_ID_LEN)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Component c (n bytes) is PREFIX ID SUFFIX?  Copies the ID. */
static int id_between(const char *c, size_t n, const char *pre, const char *suf, char *id)
{
	size_t pl = strlen(pre), sl = strlen(suf);

	if (n != pl + RM_CT_ID_LEN + sl || strncmp(c, pre, pl) != 0 ||
	    strncmp(c + pl + RM_CT_ID_LEN, suf, sl) != 0 || !rm_ct_is_id(c + pl, RM_CT_ID_LEN))
		return 0;
	memcpy(id, c + pl, RM_CT_ID_LEN);
	id[RM_CT_ID_LEN] = '\0';
	return 1;
}

/* The systemd scope and cgroupfs names a component may have. */
static const struct {
	const char *pre, *suf, *runtime, *driver;
} shapes[] = {
	{ "docker-", ".scope", "docker", "systemd" },
	{ "libpod-", ".scope", "podman", "systemd" },
	{ "libpod-", "", "podman", "cgroupfs" },
	{ "cri-containerd-", ".scope", "containerd", "systemd" },
	{ "crio-", ".scope", "cri-o", "systemd" },
	{ "crio-", "", "cri-o", "cgroupfs" },
	{ "", "", "", "cgroupfs" },  /* /docker/ID, /PARENT/ID */
};

/* "/user.slice/user-UID.slice/user@UID.service/": the uid, else -1. */
static long rootless_uid(const char *path)
{
	const char *p = path, *q;
	char *end;
	long uid;

	if (strncmp(p, "/user.slice/user-", 17) != 0)
		return -1;
	p += 17;
	uid = strtol(p, &end, 10);
	if (end == p || uid < 0 || strncmp(end, ".slice/user@", 12) != 0)
		return -1;
	q = end + 12;
	if (strtol(q, &end, 10) != uid || end == q || strncmp(end, ".service/", 9) != 0)
		return -1;
	return uid;
}

int rm_ct_parse_cgroup(const char *path, struct rm_ct_cgroup *c)
{
	const char *p = path;

	memset(c, 0, sizeof(*c));
	c->uid = -1;
	if (!path || path[0] != '/')
		return 0;
	while (*p) {
		const char *s, *e;
		while (*p == '/')
			p++;
		s = p;
		e = strchr(s, '/');
		if (!e)
			e = s + strlen(s);
		for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
			if (!id_between(s, (size_t)(e - s), shapes[i].pre, shapes[i].suf, c->id))
				continue;
			c->runtime = shapes[i].runtime;
			c->driver = shapes[i].driver;
			c->len = (size_t)(e - path);
			c->parent_len = (size_t)(s - path);
			while (c->parent_len > 0 && path[c->parent_len - 1] == '/')
				c->parent_len--;
			/* A bare ID: the runtime by its parent's name (docker's
			 * default /docker, podman's /libpod_parent); under a
			 * --cgroup-parent it is not known. */
			if (!c->runtime[0]) {
				size_t pl = c->parent_len, k = pl;
				while (k > 0 && path[k - 1] != '/')
					k--;
				if (pl - k == 6 && strncmp(path + k, "docker", 6) == 0)
					c->runtime = "docker";
				else if (pl - k == 13 && strncmp(path + k, "libpod_parent", 13) == 0)
					c->runtime = "podman";
			}
			c->uid = rootless_uid(path);
			return 1;
		}
		p = e;
	}
	return 0;
}

/* Does the cgroup directory d (n bytes, "" for the root) equal the path
 * p (n2 bytes) with its slashes normalised ("ci", "/ci/", "//ci")? */
static int same_dir(const char *d, size_t n, const char *p, size_t n2)
{
	size_t i = 0, j = 0;

	for (;;) {
		while (i < n && d[i] == '/')
			i++;
		while (j < n2 && p[j] == '/')
			j++;
		if (i == n || j == n2)
			return i == n && j == n2;
		while (i < n && j < n2 && d[i] != '/' && p[j] != '/') {
			if (d[i] != p[j])
				return 0;
			i++;
			j++;
		}
		if ((i < n && d[i] != '/') || (j < n2 && p[j] != '/'))
			return 0;
	}
}

/* systemd's slice path: "a-b-c.slice" is /a.slice/a-b.slice/a-b-c.slice
 * and "-.slice" the root.  Returns the length, or 0 when it does not fit
 * or is not a slice name. */
static size_t slice_path(const char *p, char *out, size_t size)
{
	size_t n = strlen(p), o = 0;

	if (n < 6 || strcmp(p + n - 6, ".slice") != 0 || strchr(p, '/'))
		return 0;
	if (n == 7 && p[0] == '-') {
		out[0] = '\0';
		return 1;
	}
	n -= 6;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] != '-')
			continue;
		/* Each slice's name holds its ancestors': "/a.slice/a-b.slice". */
		if (i == 0 || (i < n && p[i + 1] == '-') || o + 1 + i + 6 >= size)
			return 0;
		out[o++] = '/';
		memcpy(out + o, p, i);
		o += i;
		memcpy(out + o, ".slice", 6);
		o += 6;
	}
	out[o] = '\0';
	return o ? o : 1;
}

int rm_ct_under_parent(const char *p, const char *path, size_t parent_len)
{
	char sl[4096];

	if (!p || !p[0])
		return 0;
	if (same_dir(path, parent_len, p, strlen(p)))
		return 1;
	if (slice_path(p, sl, sizeof(sl)) > 0 && same_dir(path, parent_len, sl, strlen(sl)))
		return 1;
	return 0;
}

/* ---- a client's argv ---- */

static int in_list(const char *w, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && strncmp(*list, w, n) == 0)
			return 1;
	return 0;
}

/* Global options (before the subcommand) that take a value. */
static const char *const global_val[] = {
	"--config", "--context", "-c", "--host", "-H", "--log-level", "-l", "--tlscacert",
	"--tlscert", "--tlskey",
	/* podman */
	"--cgroup-manager", "--conmon", "--connection", "--events-backend", "--hooks-dir",
	"--identity", "--imagestore", "--module", "--network-cmd-path", "--network-config-dir",
	"--out", "--root", "--runroot", "--runtime", "--runtime-flag", "--ssh",
	"--storage-driver", "--storage-opt", "--tmpdir", "--url", "--volumepath",
	"--db-backend", "--cdi-spec-dir", "--namespace", "-n", "--address", "-a",
	"--data-root", "--snapshotter", "--cni-path", "--cni-netconfpath", NULL
};

/* run and create: the options that take a value (docker's and podman's). */
static const char *const run_val[] = {
	"--add-host", "--annotation", "-a", "--attach", "--blkio-weight",
	"--blkio-weight-device", "--cap-add", "--cap-drop", "--cgroup-parent", "--cgroupns",
	"--cidfile", "--cpu-count", "--cpu-percent", "--cpu-period", "--cpu-quota",
	"--cpu-rt-period", "--cpu-rt-runtime", "-c", "--cpu-shares", "--cpus", "--cpuset-cpus",
	"--cpuset-mems", "--detach-keys", "--device", "--device-cgroup-rule",
	"--device-read-bps", "--device-read-iops", "--device-write-bps", "--device-write-iops",
	"--dns", "--dns-opt", "--dns-option", "--dns-search", "--domainname", "--entrypoint",
	"-e", "--env", "--env-file", "--expose", "--gpus", "--group-add", "--health-cmd",
	"--health-interval", "--health-retries", "--health-start-interval",
	"--health-start-period", "--health-timeout", "-h", "--hostname", "--io-maxbandwidth",
	"--io-maxiops", "--ip", "--ip6", "--ipc", "--isolation", "--kernel-memory", "-l",
	"--label", "--label-file", "--link", "--link-local-ip", "--log-driver", "--log-opt",
	"--mac-address", "-m", "--memory", "--memory-reservation", "--memory-swap",
	"--memory-swappiness", "--mount", "--name", "--network", "--net", "--network-alias",
	"--net-alias", "--oom-score-adj", "--pid", "--pids-limit", "--platform", "-p",
	"--publish", "--pull", "--restart", "--runtime", "--security-opt", "--shm-size",
	"--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs", "--ulimit",
	"-u", "--user", "--userns", "--uts", "-v", "--volume", "--volume-driver",
	"--volumes-from", "-w", "--workdir",
	/* podman */
	"--arch", "--authfile", "--cert-dir", "--cgroup-conf", "--cgroups", "--chrootdirs",
	"--conmon-pidfile", "--creds", "--decryption-key", "--env-merge", "--gidmap",
	"--group-entry", "--health-on-failure", "--health-log-destination",
	"--health-max-log-count", "--health-max-log-size", "--health-startup-cmd",
	"--health-startup-interval", "--health-startup-retries", "--health-startup-success",
	"--health-startup-timeout", "--hostuser", "--hosts-file", "--image-volume",
	"--init-path", "--os", "--passwd-entry", "--personality", "--pod", "--pod-id-file",
	"--preserve-fd", "--preserve-fds", "--rdt-class", "--requires", "--retry",
	"--retry-delay", "--sdnotify", "--seccomp-policy", "--secret", "--shm-size-systemd",
	"--subgidname", "--subuidname", "--systemd", "--timeout", "--tz", "--uidmap",
	"--umask", "--unsetenv", "--variant", "--pidfile", "--chrootdirs", "--log-opt",
	NULL
};

static const char *const start_val[] = {
	"--detach-keys", "--checkpoint", "--checkpoint-dir", "--filter", "-f", NULL
};

static const char *const exec_val[] = {
	"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys",
	"--preserve-fd", "--preserve-fds", NULL
};

static const char *const build_val[] = {
	"--add-host", "--allow", "--annotation", "--attest", "--build-arg",
	"--build-context", "--builder", "--cache-from", "--cache-to", "--call",
	"--cgroup-parent", "--cpu-period", "--cpu-quota", "-c", "--cpu-shares",
	"--cpuset-cpus", "--cpuset-mems", "-f", "--file", "--iidfile", "--isolation",
	"--label", "--metadata-file", "-m", "--memory", "--memory-swap", "--network",
	"-o", "--output", "--platform", "--progress", "--secret", "--security-opt",
	"--shm-size", "--ssh", "-t", "--tag", "--target", "--ulimit", "--userns",
	"--volume", "-v", "--build-arg-file", "--layers", "--jobs", "--format", NULL
};

/* The option in w ("--opt=V", "--opt V", "-xV", "-x V"): the option's
 * name in *name and *nlen, its value (NULL for a flag).  Returns how many
 * words it took (1 or 2). */
static int take_opt(char *const *argv, int i, int argc, const char *const *val,
		    const char **name, size_t *nlen, const char **value)
{
	const char *w = argv[i], *eq;

	*value = NULL;
	if (w[1] == '-') {
		eq = strchr(w, '=');
		*name = w;
		*nlen = eq ? (size_t)(eq - w) : strlen(w);
		if (eq) {
			*value = eq + 1;
			return 1;
		}
		if (in_list(w, *nlen, val) && i + 1 < argc) {
			*value = argv[i + 1];
			return 2;
		}
		return 1;
	}
	/* Short flags, maybe several in one word ("-it"); the first that
	 * takes a value takes the rest of the word, or the next word. */
	for (size_t k = 1; w[k]; k++) {
		char opt[3] = { '-', w[k], '\0' };
		if (!in_list(opt, 2, val))
			continue;
		*name = w + k - 1;  /* only its second byte is read */
		*nlen = 2;
		if (w[k + 1]) {
			*value = w + k + 1 + (w[k + 1] == '=');
			return 1;
		}
		if (i + 1 < argc) {
			*value = argv[i + 1];
			return 2;
		}
		return 1;
	}
	*name = w;
	*nlen = strlen(w);
	return 1;
}

static int is(const char *name, size_t nlen, const char *want)
{
	size_t wl = strlen(want);

	if (wl == 2 && want[0] == '-' && want[1] != '-')
		return nlen == 2 && name[1] == want[1];
	return nlen == wl && strncmp(name, want, wl) == 0;
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static enum rm_ct_sub sub_of(const char *w, int container)
{
	static const struct {
		const char *word;
		enum rm_ct_sub sub;
	} subs[] = {
		{ "run", RM_CT_RUN }, { "create", RM_CT_CREATE }, { "start", RM_CT_START },
		{ "exec", RM_CT_EXEC }, { "build", RM_CT_BUILD },
	};

	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (strcmp(w, subs[i].word) == 0)
			return container && subs[i].sub == RM_CT_BUILD ? RM_CT_OTHER : subs[i].sub;
	return RM_CT_OTHER;
}

enum rm_ct_sub rm_ct_parse_client(char *const *argv, int argc, struct rm_ct_client *c)
{
	const char *b, *name, *value;
	const char *const *val;
	size_t nlen;
	int i = 1, n;

	memset(c, 0, sizeof(*c));
	c->sub = RM_CT_NOT_CLIENT;
	if (argc < 1 || !argv[0])
		return c->sub;
	b = base(argv[0]);
	if (strcmp(b, "docker") == 0 || strcmp(b, "docker-buildx") == 0 ||
	    strcmp(b, "com.docker.cli") == 0)
		c->engine = "docker";
	else if (strcmp(b, "podman") == 0 || strcmp(b, "podman-remote") == 0)
		c->engine = "podman";
	else if (strcmp(b, "nerdctl") == 0)
		c->engine = "nerdctl";
	else
		return c->sub;
	c->sub = RM_CT_OTHER;
	/* Global options, then the subcommand. */
	while (i < argc && argv[i][0] == '-' && argv[i][1]) {
		if (strcmp(argv[i], "--") == 0)
			return c->sub;
		n = take_opt(argv, i, argc, global_val, &name, &nlen, &value);
		if (value && (is(name, nlen, "-H") || is(name, nlen, "--host") ||
			      is(name, nlen, "--url")))
			c->host = value;
		else if (value && c->engine[0] == 'd' &&
			 (is(name, nlen, "--context") || is(name, nlen, "-c")))
			c->context = value;
		else if (value && c->engine[0] == 'd' && is(name, nlen, "--config"))
			c->config = value;
		i += n;
	}
	if (i >= argc)
		return c->sub;
	if (strcmp(argv[i], "container") == 0 && i + 1 < argc) {
		c->sub = sub_of(argv[++i], 1);
	} else if ((strcmp(argv[i], "image") == 0 || strcmp(argv[i], "builder") == 0) &&
		   i + 1 < argc) {
		c->sub = strcmp(argv[++i], "build") == 0 ? RM_CT_BUILD : RM_CT_OTHER;
	} else if (strcmp(argv[i], "buildx") == 0) {
		/* docker buildx build, and the plugin's own argv
		 * ("docker-buildx buildx build ..."). */
		c->sub = i + 1 < argc && (strcmp(argv[i + 1], "build") == 0 ||
					 strcmp(argv[i + 1], "b") == 0) ? RM_CT_BUILDX : RM_CT_OTHER;
		i++;
	} else {
		c->sub = sub_of(argv[i], 0);
	}
	i++;
	switch (c->sub) {
	case RM_CT_RUN:
	case RM_CT_CREATE:
		val = run_val;
		break;
	case RM_CT_START:
		val = start_val;
		break;
	case RM_CT_EXEC:
		val = exec_val;
		break;
	case RM_CT_BUILD:
	case RM_CT_BUILDX:
		val = build_val;
		break;
	default:
		return c->sub;
	}
	while (i < argc) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (argv[i][0] != '-' || !argv[i][1])
			break;
		n = take_opt(argv, i, argc, val, &name, &nlen, &value);
		i += n;
		if (!value)
			continue;
		if (c->sub == RM_CT_BUILD || c->sub == RM_CT_BUILDX) {
			/* A build's --label is the image's, not a container's. */
			if (is(name, nlen, "--cgroup-parent"))
				c->cgroup_parent = value;
			continue;
		}
		if (is(name, nlen, "--cidfile"))
			c->cidfile = value;
		else if (is(name, nlen, "--name"))
			c->name = value;
		else if (is(name, nlen, "--cgroup-parent"))
			c->cgroup_parent = value;
		else if ((is(name, nlen, "--label") || is(name, nlen, "-l")) &&
			 c->nlabels < RM_CT_MAX_LABELS)
			c->labels[c->nlabels++] = value;
	}
	if ((c->sub == RM_CT_START || c->sub == RM_CT_EXEC) && i < argc)
		c->target = argv[i];
	return c->sub;
}

const char *rm_ct_sub_name(enum rm_ct_sub sub)
{
	switch (sub) {
	case RM_CT_RUN: return "run";
	case RM_CT_CREATE: return "create";
	case RM_CT_START: return "start";
	case RM_CT_EXEC: return "exec";
	case RM_CT_BUILD: return "build";
	case RM_CT_BUILDX: return "buildx build";
	case RM_CT_OTHER: return "other";
	default: return "";
	}
}
