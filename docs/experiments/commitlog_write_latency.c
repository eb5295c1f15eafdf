/*
 * Commit-log append latency on this machine's file system: write(2) appends against stores
 * into a shared memory map of a preallocated segment (optionally with a thread touching
 * pages 1 MiB ahead of the writer), while another thread writes 1 MiB blocks to a second
 * file with an fdatasync every 10 MiB (a flush or compaction with the trickle sync) and a
 * third fdatasyncs the segment every 10 ms (periodic mode's sync-ahead).
 *
 * Not part of the build; the figures are in docs/benchmarks.md ("Where the INSERT stalls
 * come from").
 *
 *   gcc -O2 -pthread -o /tmp/wlat docs/experiments/commitlog_write_latency.c
 *   cd <a directory on the disk under test> && for m in append mmap mmap-touch; do /tmp/wlat $m; done
 *
 * Each run appends 300-byte records (20 us apart) for 8 seconds and prints the latency
 * percentiles of one append and how many took over 1 ms. Files are made in the current
 * directory and removed at the end.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <stdatomic.h>
#define SEG (256L<<20)
static int fd; static char *map; static atomic_int stop; static atomic_long pos; static const char *mode;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void *bg(void*a){int b=open("wlat-bg",O_CREAT|O_WRONLY|O_TRUNC,0644);char*buf=malloc(1<<20);memset(buf,7,1<<20);long n=0;
 while(!stop){if(write(b,buf,1<<20)<0)break;n++;if(n%10==0)fdatasync(b);if(n%200==0){ftruncate(b,0);lseek(b,0,0);}}close(b);unlink("wlat-bg");return 0;}
static void *syncer(void*a){while(!stop){usleep(10000);fdatasync(fd);}return 0;}
static void *toucher(void*a){long t=0;while(!stop&&t<SEG){if(t<pos+(1<<20)){map[t]=0;t+=4096;}else usleep(200);}return 0;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int c,char**v){mode=v[1];fd=open("wlat-seg",O_CREAT|O_RDWR|O_TRUNC,0644);
 int mm=strncmp(mode,"mmap",4)==0; if(mm){ftruncate(fd,SEG);map=mmap(0,SEG,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0);}
 pthread_t t1,t2,t3;pthread_create(&t1,0,bg,0);pthread_create(&t2,0,syncer,0);if(!strcmp(mode,"mmap-touch"))pthread_create(&t3,0,toucher,0);
 char rec[300];memset(rec,1,300);long max=SEG/300-1;double*lat=malloc(sizeof(double)*max);long n=0;double end=now()+8;
 while(now()<end&&n<max){double a=now();if(mm)memcpy(map+n*300,rec,300);else write(fd,rec,300);lat[n]=now()-a;n++;pos=n*300;usleep(20);}
 stop=1;pthread_join(t1,0);pthread_join(t2,0);if(!strcmp(mode,"mmap-touch"))pthread_join(t3,0);
 qsort(lat,n,sizeof(double),cmp);long o=0;for(long i=0;i<n;i++)if(lat[i]>1e-3)o++;
 printf("%-10s n %ld p50 %.1fus p99 %.1fus p99.99 %.0fus max %.2fms over1ms %ld\n",mode,n,lat[n/2]*1e6,lat[n*99/100]*1e6,lat[n*9999/10000]*1e6,lat[n-1]*1e3,o);
 close(fd);unlink("wlat-seg");return 0;}
