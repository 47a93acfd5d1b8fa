/* Source: Passw/SecBSD-src@3d86e50ab8533892486221ae96ee45fc6b297f36:sys/conf/newvers.sh (OpenBSD 7.5 release-period tree via DERIVATIVE SecBSD 1.5; newvers.sh has $OpenBSD: newvers.sh,v 1.202 2024/02/29$, ost="SecBSD" osr="1.5" STATUS "") */
#	$OpenBSD: newvers.sh,v 1.202 2024/02/29 17:05:10 deraadt Exp $
ost="SecBSD"
osr="1.5"
#define STATUS ""			/* release */
#define STATUS "-beta"			/* just before a release */
#define STATUS "-current"		/* just after a release */
#define STATUS "-stable"		/* stable branch */
