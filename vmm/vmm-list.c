// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmm-list: what vmm/ finds, for manual checks and scripts.
 *   vmm-list [--connect URI | --no-libvirt] [--procfs DIR] [--vmm-pid NAME=PID]...
 *            [--watch SECONDS]
 * One line per event ("started NAME id=.. pid=.. ..."), then one line per thread.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "domprof/vmm.h"

static void print_event(const struct vmm_event *ev, void *arg)
{
	const struct vmm_domain *d = ev->dom;
	char uuid[37] = "-";

	(void)arg;
	if (d->has_uuid)
		vmm__uuid_str(d->uuid, uuid);
	printf("%s name=%s id=%u pid=%d uuid=%s source=%s accel=%s tainted=%d threads=%u%s%s%s\n",
	       vmm_event_type__name(ev->type), d->name, d->id, (int)d->pid, uuid,
	       dp_domain_source__name(d->source), dp_domain_accel__name(d->accel), d->tainted,
	       d->nthreads, d->single_tcg_thread ? " single-tcg" : "",
	       d->agent_socket[0] ? " agent=" : "", d->agent_socket);
	if (ev->type != VMM_EV_STARTED && ev->type != VMM_EV_THREADS)
		return;
	for (unsigned i = 0; i < d->nthreads; i++) {
		const struct vmm_thread *t = &d->threads[i];

		printf("  thread tid=%d role=%s vcpu=%d comm=%s\n", (int)t->tid,
		       dp_thread_role__name(t->role), t->vcpu, t->comm);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"connect", required_argument, NULL, 'c'},
		{"no-libvirt", no_argument, NULL, 'n'},
		{"procfs", required_argument, NULL, 'p'},
		{"vmm-pid", required_argument, NULL, 'v'},
		{"watch", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	struct vmm_pid_arg pids[VMM_MAX_VMM_PIDS];
	struct vmm_opts opts = {.vmm_pids = pids};
	char err[512];
	double watch = 0;
	struct vmm *v;
	int c, ret;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			opts.uri = optarg;
			break;
		case 'n':
			opts.no_libvirt = true;
			break;
		case 'p':
			opts.procfs = optarg;
			break;
		case 'v':
			if (opts.nvmm_pids == VMM_MAX_VMM_PIDS) {
				fprintf(stderr, "vmm-list: too many --vmm-pid\n");
				return 2;
			}
			if (vmm__parse_vmm_pid_at(opts.procfs ? opts.procfs : "/proc", optarg,
						  &pids[opts.nvmm_pids], err, sizeof(err)) < 0) {
				fprintf(stderr, "vmm-list: %s\n", err);
				return 1;
			}
			opts.nvmm_pids++;
			break;
		case 'w':
			watch = atof(optarg);
			break;
		default:
			return 2;
		}
	}
	ret = vmm__new(&opts, &v, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "vmm-list: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	if (vmm__notice(v)[0])
		fprintf(stderr, "vmm-list: %s\n", vmm__notice(v));
	ret = vmm__poll(v, print_event, NULL);
	for (double t = 0; !ret && t < watch; t += 0.25) {
		struct timespec ts = {0, 250000000};

		fflush(stdout);
		nanosleep(&ts, NULL);
		ret = vmm__poll(v, print_event, NULL);
	}
	vmm__free(v);
	if (ret < 0) {
		fprintf(stderr, "vmm-list: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
