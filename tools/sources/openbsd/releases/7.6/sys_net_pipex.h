/* Source: Passw/SecBSD-src@569ffd723ab6b7eb5bff163849bc36705adea19b:sys/net/pipex.h (OpenBSD 7.6 release-period tree via DERIVATIVE SecBSD 1.6; newvers.sh has $OpenBSD: newvers.sh,v 1.205 2024/09/17$, ost="SecBSD" osr="1.6" STATUS "") */

#define PIPEXCTL_ENABLE		1
#define PIPEXCTL_MAXID		2

#define PIPEXCTL_NAMES { \
        { 0, 0 }, \
        { "enable", CTLTYPE_INT }, \
}
