/*
 * Unit tests of lib/container: container cgroup paths of every driver,
 * version and runtime (the real layouts docker 20.10+ and podman 4 make:
 * this machine runs cgroupfs on v1 only, the rest are these strings), and
 * container clients' argv.
 */
#include <stdio.h>
#include <string.h>

#include "container.h"
#include "tap.h"

#define ID "3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6d7e8f90123456789abcdef0123456789"
#define ID2 "0000000000000000000000000000000000000000000000000000000000000001"

static void cgroup_one(const char *path, const char *runtime, const char *driver,
		       const char *cgroup, const char *parent, long uid)
{
	struct rm_ct_cgroup c;
	char buf[4096];

	if (!rm_ct_parse_cgroup(path, &c)) {
		printf("#   not a container: %s\n", path);
		CHECK(0);
		return;
	}
	CHECK_STR(c.id, strstr(path, ID) ? ID : ID2);
	CHECK_STR(c.runtime, runtime);
	CHECK_STR(c.driver, driver);
	snprintf(buf, sizeof(buf), "%.*s", (int)c.len, path);
	CHECK_STR(buf, cgroup);
	snprintf(buf, sizeof(buf), "%.*s", (int)c.parent_len, path);
	CHECK_STR(buf, parent);
	CHECK(c.uid == uid);
}

static void cgroup_paths(void)
{
	/* cgroupfs driver, v1 (memory hierarchy) and v2 alike */
	cgroup_one("/docker/" ID, "docker", "cgroupfs", "/docker/" ID, "/docker", -1);
	cgroup_one("/ci/stage/" ID, "", "cgroupfs", "/ci/stage/" ID, "/ci/stage", -1);
	cgroup_one("/libpod_parent/libpod-" ID, "podman", "cgroupfs", "/libpod_parent/libpod-" ID,
		   "/libpod_parent", -1);
	cgroup_one("/" ID, "", "cgroupfs", "/" ID, "", -1);
	/* systemd driver */
	cgroup_one("/system.slice/docker-" ID ".scope", "docker", "systemd",
		   "/system.slice/docker-" ID ".scope", "/system.slice", -1);
	cgroup_one("/machine.slice/libpod-" ID ".scope", "podman", "systemd",
		   "/machine.slice/libpod-" ID ".scope", "/machine.slice", -1);
	/* podman v2 puts the container's processes one level down */
	cgroup_one("/machine.slice/libpod-" ID ".scope/container", "podman", "systemd",
		   "/machine.slice/libpod-" ID ".scope", "/machine.slice", -1);
	cgroup_one("/ci.slice/ci-build.slice/docker-" ID ".scope", "docker", "systemd",
		   "/ci.slice/ci-build.slice/docker-" ID ".scope", "/ci.slice/ci-build.slice", -1);
	cgroup_one("/kubepods.slice/kubepods-pod1.slice/cri-containerd-" ID ".scope", "containerd",
		   "systemd", "/kubepods.slice/kubepods-pod1.slice/cri-containerd-" ID ".scope",
		   "/kubepods.slice/kubepods-pod1.slice", -1);
	cgroup_one("/kubepods.slice/crio-" ID ".scope", "cri-o", "systemd",
		   "/kubepods.slice/crio-" ID ".scope", "/kubepods.slice", -1);
	/* rootless: podman and docker under the user's manager */
	cgroup_one("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope",
		   "podman", "systemd",
		   "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope",
		   "/user.slice/user-1000.slice/user@1000.service/user.slice", 1000);
	cgroup_one("/user.slice/user-1000.slice/user@1000.service/app.slice/docker.service/docker/" ID2,
		   "docker", "cgroupfs",
		   "/user.slice/user-1000.slice/user@1000.service/app.slice/docker.service/docker/" ID2,
		   "/user.slice/user-1000.slice/user@1000.service/app.slice/docker.service/docker", 1000);
	/* docker in docker: the outer container */
	cgroup_one("/docker/" ID "/docker/" ID2, "docker", "cgroupfs", "/docker/" ID, "/docker", -1);
}

static void not_containers(void)
{
	struct rm_ct_cgroup c;

	CHECK(!rm_ct_parse_cgroup("/", &c));
	CHECK(!rm_ct_parse_cgroup("", &c));
	CHECK(!rm_ct_parse_cgroup(NULL, &c));
	CHECK(!rm_ct_parse_cgroup("/docker", &c));
	CHECK(!rm_ct_parse_cgroup("/system.slice/docker.service", &c));
	CHECK(!rm_ct_parse_cgroup("/machine.slice/libpod-conmon-" ID ".scope", &c));
	CHECK(!rm_ct_parse_cgroup("/user.slice/user-0.slice/session-3.scope", &c));
	/* 63 and 65 digits, upper case, a relative path */
	CHECK(!rm_ct_parse_cgroup("/docker/" ID "0", &c));
	CHECK(!rm_ct_parse_cgroup("/docker/3F2A9C0D1E4B5A6978C0D1E2F3A4B5C6D7E8F90123456789ABCDEF0123456789", &c));
	CHECK(!rm_ct_parse_cgroup("/docker/3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6d7e8f90123456789abcdef012345678", &c));
	CHECK(!rm_ct_parse_cgroup("docker/" ID, &c));
	CHECK(!rm_ct_parse_cgroup("/system.slice/docker-" ID ".scop", &c));
	CHECK(rm_ct_is_id(ID, 64));
	CHECK(!rm_ct_is_id(ID, 63));
}

static int under(const char *p, const char *path)
{
	struct rm_ct_cgroup c;

	return rm_ct_parse_cgroup(path, &c) && rm_ct_under_parent(p, path, c.parent_len);
}

static void cgroup_parents(void)
{
	CHECK(under("/ci", "/ci/" ID));
	CHECK(under("ci", "/ci/" ID));
	CHECK(under("/ci/", "/ci/" ID));
	CHECK(under("/ci/stage", "/ci/stage/" ID));
	CHECK(!under("/ci", "/ci/stage/" ID));
	CHECK(!under("/ci", "/cix/" ID));
	CHECK(!under("/c", "/ci/" ID));
	CHECK(!under("/ci/stage", "/ci/" ID));
	CHECK(!under("/docker", "/ci/" ID));
	CHECK(!under("", "/ci/" ID));
	CHECK(under("/", "/" ID));
	/* systemd slices, the name holding its ancestors' */
	CHECK(under("ci.slice", "/ci.slice/docker-" ID ".scope"));
	CHECK(under("ci-build.slice", "/ci.slice/ci-build.slice/docker-" ID ".scope"));
	CHECK(!under("ci-build.slice", "/ci.slice/docker-" ID ".scope"));
	CHECK(under("-.slice", "/docker-" ID ".scope"));
	CHECK(!under("ci--x.slice", "/ci.slice/docker-" ID ".scope"));
	/* cgroupfs with a slice-like name: docker makes /P/ID as written */
	CHECK(under("ci.slice", "/ci.slice/" ID));
}

static enum rm_ct_sub client(struct rm_ct_client *c, const char *line)
{
	static char buf[4096];
	static char *argv[128];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *w = strtok(buf, " "); w && argc < 127; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	return rm_ct_parse_client(argv, argc, c);
}

static void clients_run(void)
{
	struct rm_ct_client c;

	CHECK(client(&c, "docker run --rm --cidfile /tmp/cid -m 64m img sh") == RM_CT_RUN);
	CHECK_STR(c.engine, "docker");
	CHECK_STR(c.cidfile, "/tmp/cid");
	CHECK(c.name == NULL && c.nlabels == 0 && c.cgroup_parent == NULL && c.host == NULL);
	CHECK(client(&c, "/usr/bin/docker run --cidfile=/tmp/cid --name=st1 --label=rm-tools.run=r1 "
		     "-l stage=core --cgroup-parent=/ci img") == RM_CT_RUN);
	CHECK_STR(c.cidfile, "/tmp/cid");
	CHECK_STR(c.name, "st1");
	CHECK_STR(c.cgroup_parent, "/ci");
	CHECK(c.nlabels == 2);
	CHECK_STR(c.labels[0], "rm-tools.run=r1");
	CHECK_STR(c.labels[1], "stage=core");
	CHECK(client(&c, "docker run --name st2 --label k --cgroup-parent ci.slice img") == RM_CT_RUN);
	CHECK_STR(c.name, "st2");
	CHECK_STR(c.labels[0], "k");
	CHECK_STR(c.cgroup_parent, "ci.slice");
	/* bundled short flags, a short option's value in its word */
	CHECK(client(&c, "docker run -it -lstage=app -m512m -v /a:/b --name n img") == RM_CT_RUN);
	CHECK_STR(c.labels[0], "stage=app");
	CHECK_STR(c.name, "n");
	CHECK(client(&c, "docker run -dit -l=a=b img") == RM_CT_RUN);
	CHECK_STR(c.labels[0], "a=b");
	/* the container's own command ties nothing */
	CHECK(client(&c, "docker run img make --name x --cidfile /etc/shadow -l y") == RM_CT_RUN);
	CHECK(c.name == NULL && c.cidfile == NULL && c.nlabels == 0);
	CHECK(client(&c, "docker run -e A=1 -- img --name x") == RM_CT_RUN);
	CHECK(c.name == NULL);
	/* an unknown option is read as a flag: its value ends the options */
	CHECK(client(&c, "docker run --future-opt v --name x img") == RM_CT_RUN);
	CHECK(c.name == NULL);
	CHECK(client(&c, "docker container run --name=cr img") == RM_CT_RUN);
	CHECK_STR(c.name, "cr");
	CHECK(client(&c, "docker create --name made --label a=1 img") == RM_CT_CREATE);
	CHECK_STR(c.name, "made");
	CHECK(client(&c, "docker container create --cidfile f img") == RM_CT_CREATE);
	CHECK_STR(c.cidfile, "f");
}

static void clients_global(void)
{
	struct rm_ct_client c;

	CHECK(client(&c, "docker -H unix:///run/d.sock run --name a img") == RM_CT_RUN);
	CHECK_STR(c.host, "unix:///run/d.sock");
	CHECK_STR(c.name, "a");
	CHECK(client(&c, "docker --host=unix:///x.sock --log-level debug -D run img") == RM_CT_RUN);
	CHECK_STR(c.host, "unix:///x.sock");
	/* global -l is --log-level, not a label */
	CHECK(client(&c, "docker -l info run img") == RM_CT_RUN);
	CHECK(c.nlabels == 0);
	CHECK(client(&c, "docker --context ci --config /c run --name b img") == RM_CT_RUN);
	CHECK_STR(c.name, "b");
	CHECK(client(&c, "podman --url unix:///p.sock --root /r run --cidfile /c --name p img") == RM_CT_RUN);
	CHECK_STR(c.engine, "podman");
	CHECK_STR(c.host, "unix:///p.sock");
	CHECK_STR(c.cidfile, "/c");
	CHECK(client(&c, "podman run --pod p1 --systemd=always --cgroup-parent /ci img") == RM_CT_RUN);
	CHECK_STR(c.cgroup_parent, "/ci");
	CHECK(client(&c, "nerdctl --namespace k8s run --name n img") == RM_CT_RUN);
	CHECK_STR(c.engine, "nerdctl");
	CHECK_STR(c.name, "n");
}

static void clients_other(void)
{
	struct rm_ct_client c;

	CHECK(client(&c, "docker start -a built") == RM_CT_START);
	CHECK_STR(c.target, "built");
	CHECK(client(&c, "docker container start --detach-keys x -i built2") == RM_CT_START);
	CHECK_STR(c.target, "built2");
	CHECK(client(&c, "docker exec -it -e A=1 -u 0 -w /src box make -j4") == RM_CT_EXEC);
	CHECK_STR(c.target, "box");
	CHECK(c.name == NULL);
	CHECK(client(&c, "docker build -t img --label a=b --cgroup-parent /ci -m 1g .") == RM_CT_BUILD);
	CHECK_STR(c.cgroup_parent, "/ci");
	CHECK(c.nlabels == 0);
	CHECK(client(&c, "docker image build .") == RM_CT_BUILD);
	CHECK(client(&c, "docker builder build .") == RM_CT_BUILD);
	CHECK(client(&c, "docker buildx build .") == RM_CT_BUILDX);
	CHECK(client(&c, "/usr/libexec/docker/cli-plugins/docker-buildx buildx build .") == RM_CT_BUILDX);
	CHECK(client(&c, "docker ps -a") == RM_CT_OTHER);
	CHECK(client(&c, "docker container ls") == RM_CT_OTHER);
	CHECK(client(&c, "docker compose up") == RM_CT_OTHER);
	CHECK(client(&c, "docker") == RM_CT_OTHER);
	CHECK(client(&c, "docker --") == RM_CT_OTHER);
	CHECK(client(&c, "dockerd --data-root /d") == RM_CT_NOT_CLIENT);
	CHECK(client(&c, "make run") == RM_CT_NOT_CLIENT);
	CHECK(client(&c, "") == RM_CT_NOT_CLIENT);
	/* a value missing at the end */
	CHECK(client(&c, "docker run --name") == RM_CT_RUN);
	CHECK(c.name == NULL);
	CHECK(client(&c, "docker -H") == RM_CT_OTHER);
	CHECK_STR(rm_ct_sub_name(RM_CT_RUN), "run");
}

int main(void)
{
	RUN(cgroup_paths);
	RUN(not_containers);
	RUN(cgroup_parents);
	RUN(clients_run);
	RUN(clients_global);
	RUN(clients_other);
	return tap_done();
}
