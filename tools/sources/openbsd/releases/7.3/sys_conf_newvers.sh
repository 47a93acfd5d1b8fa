/* Source: katrinafyi/comp3301@26e979b1b869528443b22c01688cd2f22f31cec8:sys/conf/newvers.sh (OpenBSD 7.3-stable) */
#	$OpenBSD: newvers.sh,v 1.194.4.1 2023/04/11 15:45:40 bluhm Exp $
ost="OpenBSD"
osr="7.3"
#define STATUS "-stable"		/* stable branch */
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
#define STATUS "-current"		/* just after a release */
