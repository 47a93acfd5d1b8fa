/* Source: netzbasis/openbsd-src@4e6ac999902cada19196d97d1183f40ec7281558:sys/conf/newvers.sh (OpenBSD 6.1) */
#	$OpenBSD: newvers.sh,v 1.152 2017/03/29 01:39:27 deraadt Exp $
ost="OpenBSD"
osr="6.1"
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
#define STATUS "-current"		/* just after a release */
