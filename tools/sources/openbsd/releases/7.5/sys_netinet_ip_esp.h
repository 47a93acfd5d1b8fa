/* Source: Passw/SecBSD-src@3d86e50ab8533892486221ae96ee45fc6b297f36:sys/netinet/ip_esp.h (OpenBSD 7.5 release-period tree via DERIVATIVE SecBSD 1.5; newvers.sh has $OpenBSD: newvers.sh,v 1.202 2024/02/29$, ost="SecBSD" osr="1.5" STATUS "") */

#define	ESPCTL_ENABLE		1	/* Enable ESP processing */
#define	ESPCTL_UDPENCAP_ENABLE	2	/* Enable ESP over UDP */
#define	ESPCTL_UDPENCAP_PORT	3	/* UDP port for encapsulation */
#define	ESPCTL_STATS		4	/* ESP Stats */
#define ESPCTL_MAXID		5

#define ESPCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "udpencap", CTLTYPE_INT }, \
	{ "udpencap_port", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
