/* Source: netzbasis/openbsd-src@44b1c1ee8edd20e8f91ee5783670d9841a76b69b:sys/conf/newvers.sh (OpenBSD 6.6) */
#	$OpenBSD: newvers.sh,v 1.171 2019/10/01 17:19:03 deraadt Exp $
ost="OpenBSD"
osr="6.6"
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
#define STATUS "-current"		/* just after a release */
