/* Source: netzbasis/openbsd-src@e0deaa949402a40060d86289184fa9d67af00880:sys/net/pipex.h (OpenBSD 6.5) */

#define PIPEXCTL_ENABLE		1
#define PIPEXCTL_INQ		2
#define PIPEXCTL_OUTQ		3
#define PIPEXCTL_MAXID		4

#define PIPEXCTL_NAMES { \
        { 0, 0 }, \
        { "enable", CTLTYPE_INT }, \
        { "inq", CTLTYPE_NODE }, \
        { "outq", CTLTYPE_NODE }, \
}
