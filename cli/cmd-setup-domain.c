// SPDX-License-Identifier: GPL-2.0-or-later
/* domprof setup-domain: give an existing libvirt domain the agent channel (doc/setup-domain.md). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "domprof/agentproto.h"
#include "domprof/setup-domain.h"

static void setup_usage(FILE *f)
{
	fprintf(f, "usage: domprof setup-domain [--live] [--remove] [--connect URI] DOMAIN\n\n"
		   "Give an existing libvirt domain the guest agent's channel: a unix\n"
		   "virtio-serial channel named " AP_PORT_NAME " whose socket libvirt\n"
		   "places itself, and which `domprof record` finds in the domain's XML.\n"
		   "The persistent definition gets it (and a virtio-serial controller when\n"
		   "it has none); with --live the running guest gets it hot-plugged too.\n"
		   "A second run changes nothing. Start domprof-agent in the guest then.\n\n"
		   "  --live         also hot-plug the channel into the running guest (which\n"
		   "                 needs a virtio-serial controller: libvirt cannot hot-plug\n"
		   "                 one); with --remove, also unplug it\n"
		   "  --remove       take the channel away again, and the virtio-serial\n"
		   "                 controller setup-domain added when nothing else uses it\n"
		   "  --connect URI  the libvirt connection (default " DP_SETUP_URI ")\n"
		   "  --help         show this help\n\n"
		   "DOMAIN is a name or a UUID. Exit status: 0 done (or nothing to do), 1 an\n"
		   "error (nothing changed unless the output says so), 2 bad usage.\n");
}

static void print_changes(const struct dp_setup_opts *o, const struct dp_setup_result *r)
{
	const char *n = r->name;
	const char *verb = o->remove ? "removed from" : "added to";

	if (r->changed & DP_SETUP_CFG_CHANNEL)
		printf("%s: channel %s %s the persistent definition\n", n, AP_PORT_NAME, verb);
	if (r->changed & DP_SETUP_CFG_CONTROLLER)
		printf("%s: virtio-serial controller %s the persistent definition\n", n, verb);
	if (r->changed & DP_SETUP_LIVE_CHANNEL) {
		if (!o->remove)
			printf("%s: channel %s hot-plugged into the running guest%s%s%s\n", n,
			       AP_PORT_NAME, r->socket[0] ? " (host socket " : "", r->socket,
			       r->socket[0] ? ")" : "");
		else if (r->unplug_pending)
			printf("%s: channel %s: unplug requested; the guest has not released it "
			       "yet\n",
			       n, AP_PORT_NAME);
		else
			printf("%s: channel %s unplugged from the running guest\n", n,
			       AP_PORT_NAME);
	}
}

/* What the operator may want to know once it worked. */
static void print_notes(const struct dp_setup_opts *o, const struct dp_setup_result *r)
{
	const char *n = r->name;

	if (!o->remove) {
		if (!r->changed)
			printf("%s: already set up\n", n);
		if (r->running && !r->live_has)
			printf("%s: the running guest gets the channel when the domain is next "
			       "started%s\n",
			       n,
			       r->live_no_ctrl ? "" : " (or run setup-domain again with --live)");
		else if (!r->running && o->live)
			printf("%s: not running: the channel is there when it starts\n", n);
		return;
	}
	if (!r->changed)
		printf("%s: not set up: nothing to remove\n", n);
	if (r->ctrl_kept)
		printf("%s: the virtio-serial controller setup-domain added is kept: other "
		       "devices use it\n",
		       n);
	if (r->running && r->live_has && !o->live)
		printf("%s: the running guest keeps its channel until it stops (--live unplugs "
		       "it)\n",
		       n);
}

int cmd_setup_domain(int argc, char **argv)
{
	static const struct option opts[] = {
		{"live", no_argument, NULL, 'l'},
		{"remove", no_argument, NULL, 'r'},
		{"connect", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct dp_setup_opts o = {0};
	struct dp_setup_result r;
	const char *uri;
	char err[512] = "";
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "lrc:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.live = true;
			break;
		case 'r':
			o.remove = true;
			break;
		case 'c':
			if (!*optarg) {
				fprintf(stderr, "domprof setup-domain: --connect needs a URI\n");
				return 2;
			}
			o.uri = optarg;
			break;
		case 'h':
			setup_usage(stdout);
			return 0;
		default:
			setup_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc || !*argv[optind]) {
		fprintf(stderr, "domprof setup-domain: which domain? (a name or a UUID)\n");
		setup_usage(stderr);
		return 2;
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "domprof setup-domain: unexpected argument '%s' (one domain)\n",
			argv[optind + 1]);
		return 2;
	}
	o.domain = argv[optind];
	uri = o.uri ? o.uri : DP_SETUP_URI;
	ret = dp_setup_domain(&o, &r, err, sizeof(err));
	/* What changed before a failure is said as well: the operator must know. */
	print_changes(&o, &r);
	if (!ret)
		print_notes(&o, &r);
	if (fflush(stdout)) {
		fprintf(stderr, "domprof setup-domain: write error on stdout\n");
		return 1;
	}
	switch (ret) {
	case 0:
		return 0;
	case -ECONNREFUSED:
		fprintf(stderr,
			"domprof setup-domain: cannot connect to libvirt at %s (is libvirtd "
			"running?): %s\n",
			uri, err);
		break;
	case -EPERM:
		fprintf(stderr,
			"domprof setup-domain: no access to libvirt at %s (%s): run it as root, or "
			"as a member of the libvirt group\n",
			uri, err);
		break;
	case -EACCES:
		fprintf(stderr,
			"domprof setup-domain: %s: libvirt refused the change: the connection to "
			"%s is read-only or may not write (%s); run it as root on a read-write "
			"connection\n",
			r.name, uri, err);
		break;
	case -ENODEV:
		if (r.cfg_has)
			fprintf(stderr,
				"domprof setup-domain: %s: %s; the channel is in the persistent "
				"definition, so the guest gets it when the domain is started again "
				"(shut it down, then start it)\n",
				r.name, err);
		else
			fprintf(stderr,
				"domprof setup-domain: %s: %s, and the domain is transient: define "
				"it "
				"with a virtio-serial controller to give it the channel\n",
				r.name, err);
		break;
	case -ENOENT:
	case -ENOTSUP:
		fprintf(stderr, "domprof setup-domain: %s\n", err);
		break;
	default:
		fprintf(stderr, "domprof setup-domain: %s: %s\n", r.name, err[0] ? err : "failed");
		break;
	}
	return 1;
}
