/* Source: netzbasis/openbsd-src@72ff345029cd271fe7ea8090aff7a89d1d32a7af:sys/conf/newvers.sh (OpenBSD 6.2) */
#	$OpenBSD: newvers.sh,v 1.155 2017/09/25 06:45:54 deraadt Exp $
ost="OpenBSD"
osr="6.2"
#define STATUS ""			/* release */
#define STATUS "-current"		/* just after a release */
#define STATUS "-beta"			/* just before a release */
