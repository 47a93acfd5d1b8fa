/* Source: CobaltBSD/src@826fc1384d40b97a37da503eab1ad9216bf0a960:sys/conf/newvers.sh (OpenBSD 7.4-current (derivative CobaltBSD import)) */
#	$OpenBSD: newvers.sh,v 1.198 2023/10/04 15:40:13 bluhm Exp $
ost="OpenBSD"
osr="7.4"
#define STATUS "-current"		/* just after a release */
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
#define STATUS "-stable"		/* stable branch */
