/* Source: Passw/SecBSD-src@569ffd723ab6b7eb5bff163849bc36705adea19b:sys/ufs/ffs/ffs_extern.h (OpenBSD 7.6 release-period tree via DERIVATIVE SecBSD 1.6; newvers.sh has $OpenBSD: newvers.sh,v 1.205 2024/09/17$, ost="SecBSD" osr="1.6" STATUS "") */

#define FFS_CLUSTERREAD		1	/* cluster reading enabled */
#define FFS_CLUSTERWRITE	2	/* cluster writing enabled */
#define FFS_REALLOCBLKS		3	/* block reallocation enabled */
#define FFS_ASYNCFREE		4	/* asynchronous block freeing enabled */
#define	FFS_MAX_SOFTDEPS	5	/* maximum structs before slowdown */
#define	FFS_SD_TICKDELAY	6	/* ticks to pause during slowdown */
#define	FFS_SD_WORKLIST_PUSH	7	/* # of worklist cleanups */
#define	FFS_SD_BLK_LIMIT_PUSH	8	/* # of times block limit neared */
#define	FFS_SD_INO_LIMIT_PUSH	9	/* # of times inode limit neared */
#define	FFS_SD_BLK_LIMIT_HIT	10	/* # of times block slowdown imposed */
#define	FFS_SD_INO_LIMIT_HIT	11	/* # of times inode slowdown imposed */
#define	FFS_SD_SYNC_LIMIT_HIT	12	/* # of synchronous slowdowns imposed */
#define	FFS_SD_INDIR_BLK_PTRS	13	/* bufs redirtied as indir ptrs not written */
#define	FFS_SD_INODE_BITMAP	14	/* bufs redirtied as inode bitmap not written */
#define	FFS_SD_DIRECT_BLK_PTRS	15	/* bufs redirtied as direct ptrs not written */
#define	FFS_SD_DIR_ENTRY	16	/* bufs redirtied as dir entry cannot write */
#define	FFS_DIRHASH_DIRSIZE	17	/* min directory size, in bytes */
#define	FFS_DIRHASH_MAXMEM	18	/* max kvm to use, in bytes */
#define	FFS_DIRHASH_MEM		19	/* current mem usage, in bytes */
#define	FFS_MAXID		20	/* number of valid ffs ids */

#define FFS_NAMES { \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ 0, 0 }, \
	{ "dirhash_dirsize", CTLTYPE_INT }, \
	{ "dirhash_maxmem", CTLTYPE_INT }, \
	{ "dirhash_mem", CTLTYPE_INT }, \
}
