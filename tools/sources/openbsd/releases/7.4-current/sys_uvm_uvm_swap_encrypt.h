/* Source: CobaltBSD/src@826fc1384d40b97a37da503eab1ad9216bf0a960:sys/uvm/uvm_swap_encrypt.h (OpenBSD 7.4-current (derivative CobaltBSD import)) */

#define SWPENC_ENABLE	0
#define SWPENC_CREATED	1
#define SWPENC_DELETED	2
#define SWPENC_MAXID	3

#define CTL_SWPENC_NAMES { \
	{ "enable", CTLTYPE_INT }, \
	{ "keyscreated", CTLTYPE_INT }, \
	{ "keysdeleted", CTLTYPE_INT }, \
}
