/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libvirt backend's parts that need no daemon: its URIs, checked at
 * plan time; the domain XML, read back by libvirt's own parser (the test
 * driver, test:///default) with hostile paths and command lines; what a
 * lifecycle event means; the domain's name. Real domains are run end to
 * end against a real libvirtd and an embedded driver (tests/e2e/run-libvirt.sh).
 */
#include "testlib.h"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/libvirt_int.h"
#include "core/plan.h"
#include "core/util.h"
#include "run/shards.h"

static void
expect_uri(const char *uri, const char *words)
{
	struct plan p;

	plan_init(&p);
	plan_defaults(&p);
	free(p.backend);
	p.backend = xstrdup("libvirt");
	plan_set_backend_opt(&p, "uri", uri);
	if (!words) {
		if (backend_check_options(&p) != OK)
			fail_msg("-o uri=%s refused: %s", uri, error_msg());
	} else {
		assert_int_equal(backend_check_options(&p), ERR_INVALID);
		if (!strstr(error_msg(), words))
			fail_msg("-o uri=%s: '%s' does not say '%s'", uri, error_msg(), words);
	}
	error_clear();
	plan_release(&p);
}

static void
test_uris(void **state)
{
	(void)state;
	expect_uri("qemu:///system", NULL);
	expect_uri("qemu:///session", NULL);
	expect_uri("qemu:///system?socket=/run/x/libvirt-sock", NULL);
	expect_uri("qemu:///embed?root=/var/tmp/fswb-embed", NULL);
	expect_uri("qemu:///system,qemu:///embed?root=/tmp/e", NULL);
	expect_uri("qemu+ssh://root@box/system", NULL);
	expect_uri("qemu+ssh://root@box:2222/system?keyfile=/k/id_ed25519", NULL);
	expect_uri("qemu+ssh://root@box/system?keyfile=k", "keyfile must be an absolute path");
	expect_uri("qemu+ssh://-oProxyCommand=x/system", "not a host name");
	expect_uri("qemu+ssh://root@-oProxyCommand=x/system", "not a host name");
	expect_uri("qemu+ssh:///system", "needs a host");
	expect_uri("qemu+ssh://root@box/session", "its /system one");
	expect_uri("qemu://box/system", "reached over ssh: qemu+ssh://box/system");
	expect_uri("qemu+tcp://box/system", "over ssh only");
	expect_uri("qemu:///system?keyfile=/k", "takes only");
	expect_uri("xen:///system", "starts with qemu://");
	expect_uri("system", "not a libvirt URI");
	expect_uri("qemu://system", "has no path");
	expect_uri("qemu:///other", "/system, /session or /embed");
	expect_uri("qemu:///embed", "needs its directory");
	expect_uri("qemu:///embed?root=rel", "absolute path");
	expect_uri("qemu:///embed?root=/a/../b", "absolute path");
	expect_uri("qemu:///system?root=/a", "takes only");
	expect_uri("qemu:///system?no_verify=1", "takes only");
	expect_uri("qemu:///system?socket=/a%00b", "absolute path");
	expect_uri("qemu:///sys tem", "no spaces");
	expect_uri("qemu:///system'", "no spaces, quotes");
	expect_uri("qemu:///system\n", "control characters");
	expect_uri("qemu:///embed?root=/a&root=/b&socket=/c", "takes only");
}

static void
test_uri_fields(void **state)
{
	struct lv_uri u;

	(void)state;
	assert_int_equal(lv_uri_parse("qemu:///embed?root=/var/tmp/e", &u), OK);
	assert_string_equal(u.driver, "qemu");
	assert_null(u.host);
	assert_string_equal(u.path, "/embed");
	assert_string_equal(u.root, "/var/tmp/e");
	lv_uri_release(&u);
	assert_int_equal(lv_uri_parse("qemu:///system?socket=/s", &u), OK);
	assert_string_equal(u.path, "/system");
	assert_null(u.root);
	lv_uri_release(&u);
}

static bool seen_start;
static int seen_verdict;
static const char *seen_why;

static int
on_event(virConnectPtr c, virDomainPtr d, int event, int detail, void *opaque)
{
	seen_start |= event == VIR_DOMAIN_EVENT_STARTED;
	seen_verdict = lv_event_verdict(event, detail, &seen_why);
	return 0;
}

/* libvirt's test driver reads the XML back: every hostile value survives intact. */
static void
test_xml_read_back(void **state)
{
	const char *disks[] = { "/data/a'b\"c/test.img", "/data/x&y<z>/scratch.img" };
	struct lv_domain d = { .name = "fswb-ext4-4k-1-1",
			       .kvm = false,
			       .machine = "x86_64",
			       .cpus = 2,
			       .mem = 2ull << 30,
			       .kernel = "/k/vmlinuz-<6.1>&'\"",
			       .initrd = "/k/initrd & more",
			       .cmdline = "console=ttyS0 a=\"b c\" <x> & y='z'",
			       .root = "/r/root.qcow2",
			       .disks = disks,
			       .ndisks = 2 };
	char *xml = lv_domain_xml(&d), *test_xml, *back;
	virConnectPtr c;
	virDomainPtr dom;

	(void)state;
	assert_non_null(strstr(xml, "<domain type='qemu'>"));
	assert_non_null(strstr(xml, "<cpu mode='maximum'/>"));
	assert_non_null(strstr(xml, "<on_reboot>destroy</on_reboot>"));
	assert_non_null(strstr(xml, "name='org.fswb.ctl'"));
	assert_non_null(strstr(xml, "<acpi/>"));
	/* the test driver runs domains of type 'test' */
	test_xml = xstrdup(xml);
	memcpy(strstr(test_xml, "'qemu'>"), "'test'>", 7);
	c = virConnectOpen("test:///default");
	assert_non_null(c);
	virConnectDomainEventRegisterAny(c, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
					 VIR_DOMAIN_EVENT_CALLBACK(on_event), NULL, NULL);
	dom = virDomainCreateXML(c, test_xml, 0);
	if (!dom)
		fail_msg("the test driver refused the XML: %s", virGetLastErrorMessage());
	back = virDomainGetXMLDesc(dom, 0);
	assert_non_null(strstr(back, "<kernel>/k/vmlinuz-&lt;6.1&gt;&amp;&apos;&quot;</kernel>"));
	assert_non_null(strstr(back, "<cmdline>console=ttyS0 a=&quot;b c&quot; &lt;x&gt; &amp; "
				     "y=&apos;z&apos;</cmdline>"));
	assert_non_null(strstr(back, "<initrd>/k/initrd &amp; more</initrd>"));
	assert_non_null(strstr(back, "file='/data/x&amp;y&lt;z&gt;/scratch.img'"));
	assert_non_null(strstr(back, "file='/data/a&apos;b&quot;c/test.img'"));
	assert_non_null(strstr(back, "<target dev='vdc' bus='virtio'/>"));
	assert_non_null(strstr(back, "<memory unit='KiB'>2097152</memory>"));
	assert_non_null(strstr(back, "<vcpu placement='static'>2</vcpu>"));
	assert_non_null(strstr(back, "<on_crash>destroy</on_crash>"));
	free(back);
	/* the events libvirt sends for it, read as the worker reads them */
	for (int i = 0; i < 50 && !seen_start; i++)
		virEventRunDefaultImpl();
	assert_int_equal(seen_verdict, 0);
	assert_int_equal(virDomainDestroy(dom), 0);
	for (int i = 0; i < 50 && !seen_why; i++)
		virEventRunDefaultImpl();
	assert_int_equal(seen_verdict, 2);
	assert_non_null(seen_why);
	assert_non_null(strstr(seen_why, "virsh destroy"));
	virDomainFree(dom);
	virConnectClose(c);
	free(test_xml);
	free(xml);

	d.kvm = true;
	d.initrd = NULL;
	xml = lv_domain_xml(&d);
	assert_non_null(strstr(xml, "<domain type='kvm'>"));
	assert_non_null(strstr(xml, "host-passthrough"));
	assert_null(strstr(xml, "<initrd>"));
	free(xml);
}

static void
test_event_verdicts(void **state)
{
	const char *why;

	(void)state;
	/* a power-off, and a panic's reboot that on_reboot=destroy ends: clean */
	assert_int_equal(
		lv_event_verdict(VIR_DOMAIN_EVENT_STOPPED, VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN, &why),
		1);
	assert_null(why);
	assert_int_equal(
		lv_event_verdict(VIR_DOMAIN_EVENT_STOPPED, VIR_DOMAIN_EVENT_STOPPED_CRASHED, &why),
		2);
	assert_string_equal(why, "the guest crashed");
	assert_int_equal(
		lv_event_verdict(VIR_DOMAIN_EVENT_STOPPED, VIR_DOMAIN_EVENT_STOPPED_FAILED, &why),
		2);
	assert_non_null(strstr(why, "QEMU failed"));
	assert_int_equal(lv_event_verdict(VIR_DOMAIN_EVENT_SUSPENDED,
					  VIR_DOMAIN_EVENT_SUSPENDED_IOERROR, &why),
			 2);
	assert_non_null(strstr(why, "full"));
	/* fswb starts the domain paused: a pause alone is the worker's to judge */
	assert_int_equal(lv_event_verdict(VIR_DOMAIN_EVENT_SUSPENDED,
					  VIR_DOMAIN_EVENT_SUSPENDED_PAUSED, &why),
			 0);
	assert_int_equal(lv_event_verdict(VIR_DOMAIN_EVENT_RESUMED, 0, &why), 0);
	assert_int_equal(lv_event_verdict(VIR_DOMAIN_EVENT_STARTED, 0, &why), 0);
}

static void
test_names(void **state)
{
	char *n;

	(void)state;
	n = lv_domain_name("ext4-4k", 1234, 7);
	assert_string_equal(n, "fswb-ext4-4k-1234-7");
	free(n);
	n = lv_domain_name("x/y z;$(rm)", 1, 1);
	assert_string_equal(n, "fswb-x-y-z---rm--1-1");
	free(n);
	n = lv_domain_name("a-very-long-configuration-name-that-goes-on-and-on", 4194304, 99);
	assert_true(strlen(n) <= 48);
	assert_non_null(strstr(n, "-4194304-99"));
	free(n);
}

/* Two URIs are two machines; one URI is this host, counted by its size. */
static void
test_machines(void **state)
{
	const struct backend_ops *ops = backend_find("libvirt");
	struct host_size host = { .cores = 8, .mem = 64ull << 30 };
	struct strbuf why = STRBUF_INIT;
	struct plan p;

	(void)state;
	assert_non_null(ops);
	plan_init(&p);
	plan_defaults(&p);
	free(p.backend);
	p.backend = xstrdup("libvirt");
	plan_set_backend_opt(&p, "uri", "qemu:///system,qemu:///embed?root=/tmp/e");
	assert_int_equal(shards_choose(&p, ops, &host, 10, &why), 2);
	strbuf_release(&why);
	plan_set_backend_opt(&p, "uri", "qemu:///system");
	assert_true(shards_choose(&p, ops, &host, 10, &why) > 1);
	strbuf_release(&why);
	/* one remote host: one machine, whatever this host's size */
	plan_set_backend_opt(&p, "uri", "qemu+ssh://root@box/system");
	assert_int_equal(shards_choose(&p, ops, &host, 10, &why), 1);
	strbuf_release(&why);
	plan_release(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uris),	      cmocka_unit_test(test_uri_fields),
		cmocka_unit_test(test_xml_read_back), cmocka_unit_test(test_event_verdicts),
		cmocka_unit_test(test_names),	      cmocka_unit_test(test_machines),
	};

	backends_init();
	virEventRegisterDefaultImpl();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
