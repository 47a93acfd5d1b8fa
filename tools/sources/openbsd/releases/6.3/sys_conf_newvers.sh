/* Source: netzbasis/openbsd-src@bda9423adea36d456667626b097beded37e4751a:sys/conf/newvers.sh (OpenBSD 6.3) */
#	$OpenBSD: newvers.sh,v 1.161 2018/03/14 16:52:09 deraadt Exp $
ost="OpenBSD"
osr="6.3"
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
#define STATUS "-current"		/* just after a release */
