/* Source: netzbasis/openbsd-src@89b1ea33cb8518112f9142507d0680181a3b5531:sys/conf/newvers.sh (OpenBSD 6.8-current) */
#	$OpenBSD: newvers.sh,v 1.178 2020/09/30 14:46:02 jsg Exp $
ost="OpenBSD"
osr="6.8"
#define STATUS "-current"		/* just after a release */
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
