/* Source: netzbasis/openbsd-src@e0deaa949402a40060d86289184fa9d67af00880:sys/conf/newvers.sh (OpenBSD 6.5) */
#	$OpenBSD: newvers.sh,v 1.167 2019/04/02 08:30:38 deraadt Exp $
ost="OpenBSD"
osr="6.5"
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
#define STATUS "-current"		/* just after a release */
