/* Source: netzbasis/openbsd-src@8030d7a93fa9d4cae20487395c7e1c7126b8a954:sys/conf/newvers.sh (OpenBSD 6.0) */
#	$OpenBSD: newvers.sh,v 1.146 2016/07/15 05:06:24 deraadt Exp $
ost="OpenBSD"
osr="6.0"
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
#define STATUS "-current"		/* just after a release */
