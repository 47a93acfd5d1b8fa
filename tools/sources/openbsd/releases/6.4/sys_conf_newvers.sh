/* Source: netzbasis/openbsd-src@dc525184cbba8f0bb3f0a2d572fa2b0f3f1fdfe5:sys/conf/newvers.sh (OpenBSD 6.4) */
#	$OpenBSD: newvers.sh,v 1.164 2018/09/29 16:00:44 deraadt Exp $
ost="OpenBSD"
osr="6.4"
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
#define STATUS "-current"		/* just after a release */
