/* Source: netzbasis/openbsd-src@15c0878c67d873267e45e4d4c5d3c1aef5537271:sys/conf/newvers.sh (OpenBSD 6.7) */
#	$OpenBSD: newvers.sh,v 1.174 2020/05/04 15:00:35 deraadt Exp $
ost="OpenBSD"
osr="6.7"
#define STATUS ""			/* release */
#define STATUS "-current"		/* just after a release */
#define STATUS "-beta"			/* just before a release */
