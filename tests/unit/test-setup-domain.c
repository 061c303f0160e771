// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * record/setup-domain.c: what it reads in a domain's XML, on XML as libvirt
 * 9.0 formats it (running and inactive definitions of a test guest), and on
 * XML made to mislead it (an application's metadata, odd quoting, cut text).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "record/setup-domain.h"

/* A running test guest after `setup-domain --live` (virsh dumpxml, trimmed). */
static const char live_xml[] =
	"<domain type='qemu' id='7' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n"
	"  <name>domprof-test-t2700-a</name>\n"
	"  <uuid>0b5c1a52-0d4e-4a8e-9c38-3f0f6b0e2d11</uuid>\n"
	"  <metadata>\n"
	"    <dp:test xmlns:dp=\"https://domprof.org/test/1\" owner=\"4242 1234\" "
	"dir=\"/tmp/x\"/>\n"
	"  </metadata>\n"
	"  <memory unit='KiB'>131072</memory>\n"
	"  <devices>\n"
	"    <emulator>/usr/bin/qemu-system-x86_64</emulator>\n"
	"    <controller type='pci' index='0' model='pci-root'>\n"
	"      <alias name='pci.0'/>\n"
	"    </controller>\n"
	"    <controller type='virtio-serial' index='0'>\n"
	"      <alias name='virtio-serial0'/>\n"
	"      <address type='pci' domain='0x0000' bus='0x00' slot='0x03' function='0x0'/>\n"
	"    </controller>\n"
	"    <serial type='file'>\n"
	"      <source path='/tmp/x/t2700-a.console.log'/>\n"
	"      <target type='isa-serial' port='0'>\n"
	"        <model name='isa-serial'/>\n"
	"      </target>\n"
	"    </serial>\n"
	"    <console type='file'>\n"
	"      <source path='/tmp/x/t2700-a.console.log'/>\n"
	"      <target type='serial' port='0'/>\n"
	"    </console>\n"
	"    <channel type='unix'>\n"
	"      <source mode='bind' "
	"path='/var/lib/libvirt/qemu/channel/target/domain-7-domprof-test-t2700-a/"
	"org.qemu.guest_agent.0'/>\n"
	"      <target type='virtio' name='org.qemu.guest_agent.0' state='disconnected'/>\n"
	"      <alias name='channel0'/>\n"
	"      <address type='virtio-serial' controller='0' bus='0' port='1'/>\n"
	"    </channel>\n"
	"    <channel type='unix'>\n"
	"      <source mode='bind' "
	"path='/var/lib/libvirt/qemu/channel/target/domain-7-domprof-test-t2700-a/"
	"org.domprof.agent.0'/>\n"
	"      <target type='virtio' name='org.domprof.agent.0' state='disconnected'/>\n"
	"      <alias name='channel1'/>\n"
	"      <address type='virtio-serial' controller='0' bus='0' port='2'/>\n"
	"    </channel>\n"
	"    <memballoon model='none'/>\n"
	"  </devices>\n"
	"  <seclabel type='none' model='none'/>\n"
	"</domain>\n";

/* Its persistent definition: libvirt keeps no path for a channel given none. */
static const char cfg_xml[] =
	"<domain type='qemu'>\n"
	"  <name>domprof-test-t2700-a</name>\n"
	"  <devices>\n"
	"    <controller type=\"virtio-serial\" index=\"0\">\n"
	"      <alias name='ua-domprof-vserial'/>\n"
	"      <address type='pci' slot='0x03'/>\n"
	"    </controller>\n"
	"    <channel type=\"unix\">\n"
	"      <target type=\"virtio\" name=\"org.domprof.agent.0\"/>\n"
	"      <address type='virtio-serial' controller='0' bus='0' port='1'/>\n"
	"    </channel>\n"
	"  </devices>\n"
	"</domain>\n";

static char *span(const struct sd_elem *e, char *buf, size_t cap)
{
	size_t n = (size_t)(e->end - e->start);

	assert_true(n < cap);
	memcpy(buf, e->start, n);
	buf[n] = '\0';
	return buf;
}

static void test_live(void **state)
{
	struct sd_elem e;
	char type[16], path[256], buf[1024];

	(void)state;
	assert_true(sd_xml__channel(live_xml, &e, type, sizeof(type)));
	assert_string_equal(type, "unix");
	/* The whole element, as libvirt's detach wants it back, and not the guest agent's. */
	span(&e, buf, sizeof(buf));
	assert_true(!strncmp(buf, "<channel type='unix'>", 21));
	assert_non_null(strstr(buf, "port='2'/>\n    </channel>"));
	assert_null(strstr(buf, "guest_agent"));
	assert_true(sd_xml__source_path(&e, path, sizeof(path)));
	assert_string_equal(path, "/var/lib/libvirt/qemu/channel/target/"
				  "domain-7-domprof-test-t2700-a/org.domprof.agent.0");
	assert_true(sd_xml__controller(live_xml, &e));
	assert_non_null(strstr(span(&e, buf, sizeof(buf)), "virtio-serial0"));
	assert_true(!strncmp(buf, "<controller type='virtio-serial'", 32));
	assert_true(strlen(buf) > 20 && !strcmp(buf + strlen(buf) - 13, "</controller>"));
	assert_true(sd_xml__alias(&e, type, sizeof(type)));
	assert_string_equal(type, "virtio-serial0");
	/* Two channels on the controller; the serial console is no user of it. */
	assert_int_equal(sd_xml__vserial_users(live_xml), 2);
}

static void test_inactive(void **state)
{
	struct sd_elem e;
	char type[16], path[64] = "junk";

	(void)state;
	assert_true(sd_xml__channel(cfg_xml, &e, type, sizeof(type)));
	assert_string_equal(type, "unix");
	assert_true(sd_xml__source_path(&e, path, sizeof(path)));
	assert_string_equal(path, "");
	assert_false(sd_xml__alias(&e, type, sizeof(type)));
	assert_true(sd_xml__controller(cfg_xml, &e));
	assert_true(sd_xml__alias(&e, path, sizeof(path)));
	assert_string_equal(path, "ua-domprof-vserial");
	assert_int_equal(sd_xml__vserial_users(cfg_xml), 1);
}

static void test_absent(void **state)
{
	static const char xml[] =
		"<domain type='qemu'><devices>"
		"<channel type='unix'><source mode='bind'/>"
		"<target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
		"<channel type='spicevmc'><target type='virtio' "
		"name='com.redhat.spice.0'/></channel>"
		"<channel type='unix'><target type='guestfwd' address='10.0.2.1' port='4600'/>"
		"</channel>"
		"<console type='pty'><target type='virtio' port='1'/></console>"
		"<controller type='virtio-serial-x' index='0'/>"
		"<controller type='usb' index='0' model='none'/>"
		"</devices></domain>";
	struct sd_elem e;
	char type[16];

	(void)state;
	assert_false(sd_xml__channel(xml, &e, type, sizeof(type)));
	assert_false(sd_xml__controller(xml, &e));
	/* Two virtio channels and the virtio console; guestfwd is not on the controller. */
	assert_int_equal(sd_xml__vserial_users(xml), 3);
	assert_false(sd_xml__channel("", &e, type, sizeof(type)));
	assert_int_equal(sd_xml__vserial_users("<domain/>"), 0);
}

/* Only the domain's own devices count, not an application's metadata. */
static void test_metadata_decoy(void **state)
{
	static const char xml[] =
		"<domain type='qemu'><metadata>"
		"<app xmlns='urn:x'><devices>"
		"<channel type='unix'><target type='virtio' name='org.domprof.agent.0'/></channel>"
		"<controller type='virtio-serial' index='0'/>"
		"</devices></app>"
		"</metadata>"
		"<devices><channel type='pty'><target type='serial'/></channel></devices>"
		"<qemu:commandline xmlns:qemu='q'><qemu:arg value='-device'/></qemu:commandline>"
		"</domain>";
	struct sd_elem e;
	char type[16];

	(void)state;
	assert_false(sd_xml__channel(xml, &e, type, sizeof(type)));
	assert_false(sd_xml__controller(xml, &e));
	assert_int_equal(sd_xml__vserial_users(xml), 0);
}

/* A pty channel of that name: found, and its type tells the caller it is not a unix one. */
static void test_other_type(void **state)
{
	static const char xml[] = "<domain><devices>"
				  "<channel type='pty'><source path='/dev/pts/3'/>"
				  "<target type='virtio' name='org.domprof.agent.0'/></channel>"
				  "</devices></domain>";
	struct sd_elem e;
	char type[16];

	(void)state;
	assert_true(sd_xml__channel(xml, &e, type, sizeof(type)));
	assert_string_equal(type, "pty");
}

static void test_attr(void **state)
{
	static const char tag[] =
		"<source typex='a' path2='x' note=\"it's > path='/bad'\" "
		"mode = 'bind' path='/a&amp;b/&apos;c&#39;&#x41;&lt;&gt;&quot;' />";
	static const char unterminated[] = "<a b='x", novalue[] = "<a b>", unquoted[] = "<a b=x>";
	const char *end = tag + sizeof(tag) - 1;
	char v[64];

	(void)state;
	assert_true(sd_xml__attr(tag, end, "path", v, sizeof(v)));
	assert_string_equal(v, "/a&b/'c'A<>\"");
	assert_true(sd_xml__attr(tag, end, "mode", v, sizeof(v)));
	assert_string_equal(v, "bind");
	assert_true(sd_xml__attr(tag, end, "note", v, sizeof(v)));
	assert_string_equal(v, "it's > path='/bad'");
	assert_false(sd_xml__attr(tag, end, "type", v, sizeof(v)));
	assert_false(sd_xml__attr(tag, end, "pat", v, sizeof(v)));
	/* Cut short, unterminated, or no value: not found, and nothing read past the end. */
	assert_false(sd_xml__attr(tag, tag + 40, "path", v, sizeof(v)));
	assert_false(sd_xml__attr(unterminated, unterminated + 7, "b", v, sizeof(v)));
	assert_false(sd_xml__attr(novalue, novalue + 5, "b", v, sizeof(v)));
	assert_false(sd_xml__attr(unquoted, unquoted + 7, "b", v, sizeof(v)));
	/* A value longer than the buffer is cut, still terminated. */
	assert_true(sd_xml__attr(tag, end, "path", v, 4));
	assert_string_equal(v, "/a&");
}

static void test_long_path(void **state)
{
	static const char xml[] = "<domain><devices><channel type='unix'>"
				  "<source mode='bind' path='/0123456789/0123456789'/>"
				  "<target type='virtio' name='org.domprof.agent.0'/>"
				  "</channel></devices></domain>";
	struct sd_elem e;
	char type[16], path[32];

	(void)state;
	assert_true(sd_xml__channel(xml, &e, type, sizeof(type)));
	assert_false(sd_xml__source_path(&e, path, 22));
	assert_true(sd_xml__source_path(&e, path, 23));
	assert_string_equal(path, "/0123456789/0123456789");
}

/* Text cut anywhere: never a match from a half element, never a read past the NUL. */
static void test_truncated(void **state)
{
	char buf[sizeof(live_xml)];
	struct sd_elem e;
	char type[16], path[256];
	const char *close = strstr(live_xml, "</devices>");
	unsigned found = 0;

	(void)state;
	for (size_t n = 0; n < sizeof(live_xml); n++) {
		memcpy(buf, live_xml, n);
		buf[n] = '\0';
		if (sd_xml__channel(buf, &e, type, sizeof(type))) {
			found++;
			assert_true(sd_xml__source_path(&e, path, sizeof(path)));
		}
		sd_xml__controller(buf, &e);
		sd_xml__vserial_users(buf);
		/* Without its </devices> the section is not taken at all. */
		if (n < (size_t)(close - live_xml) + 10)
			assert_int_equal(found, 0);
	}
	assert_int_equal(found, sizeof(live_xml) - 1 - (size_t)(close - live_xml) - 10 + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live),	   cmocka_unit_test(test_inactive),
		cmocka_unit_test(test_absent),	   cmocka_unit_test(test_metadata_decoy),
		cmocka_unit_test(test_other_type), cmocka_unit_test(test_attr),
		cmocka_unit_test(test_long_path),  cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
