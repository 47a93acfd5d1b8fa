/* Source: Passw/SecBSD-src@3d86e50ab8533892486221ae96ee45fc6b297f36:sys/net/pipex.h (OpenBSD 7.5 release-period tree via DERIVATIVE SecBSD 1.5; newvers.sh has $OpenBSD: newvers.sh,v 1.202 2024/02/29$, ost="SecBSD" osr="1.5" STATUS "") */

#define PIPEXCTL_ENABLE		1
#define PIPEXCTL_MAXID		2

#define PIPEXCTL_NAMES { \
        { 0, 0 }, \
        { "enable", CTLTYPE_INT }, \
}
