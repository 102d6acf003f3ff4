// Recording hooks: what each wrapped MPI call puts in the trace. Called by the generated
// C and Fortran wrappers (gen_wrappers.py, mpi_functions.txt) with C values after the PMPI
// call as Hook(scope, <constants from the list>, rc, <C parameters>); `pre=` hooks run
// before it with the same parameters, to capture what MPI destroys (request handles,
// freed communicators). A hook may throw: the wrapper catches and turns tracing off.
#pragma once

#include <mpi.h>

#include "pas2p/core/event.h"
#include "runtime.h"

namespace pas2p::tracer {

using ::pas2p::EventKind;

// Lifecycle.
void OnInit(CallScope& scope, int rc, int* argc, char*** argv);
void OnInitThread(CallScope& scope, int rc, int* argc, char*** argv, int required, int* provided);
void PreFinalize(CallScope& scope);
void OnFinalize(CallScope& scope, int rc);
void PreAbort(CallScope& scope, MPI_Comm comm, int errorcode);
void OnAbort(CallScope& scope, int rc, MPI_Comm comm, int errorcode);

// Point-to-point.
void OnSend(CallScope& scope, EventKind kind, bool sync, int rc, const void* buf, int count,
            MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
void OnIsend(CallScope& scope, EventKind kind, bool sync, int rc, const void* buf, int count,
             MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request);
void OnRecv(CallScope& scope, int rc, void* buf, int count, MPI_Datatype datatype, int source,
            int tag, MPI_Comm comm, MPI_Status* status);
void OnIrecv(CallScope& scope, int rc, void* buf, int count, MPI_Datatype datatype, int source,
             int tag, MPI_Comm comm, MPI_Request* request);
void OnSendrecv(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                int dest, int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                int source, int recvtag, MPI_Comm comm, MPI_Status* status);
void OnSendrecvReplace(CallScope& scope, int rc, void* buf, int count, MPI_Datatype datatype,
                       int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                       MPI_Status* status);

// Persistent requests (see mpi_functions.txt).
void OnSendInit(CallScope& scope, bool sync, int rc, const void* buf, int count,
                MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request);
void OnRecvInit(CallScope& scope, int rc, void* buf, int count, MPI_Datatype datatype, int source,
                int tag, MPI_Comm comm, MPI_Request* request);
void OnStart(CallScope& scope, int rc, MPI_Request* request);
void OnStartall(CallScope& scope, int rc, int count, MPI_Request* requests);
void PreRequestFree(CallScope& scope, MPI_Request* request);
void OnRequestFree(CallScope& scope, int rc, MPI_Request* request);

// Probes: no event (the scope alone keeps their time out of the compute bursts). A probe
// posted with MPI_ANY_SOURCE that finds a message is remembered, so that the receive naming
// that message's source is recorded as a wildcard receive.
void OnProbe(CallScope& scope, int rc, int source, int tag, MPI_Comm comm, MPI_Status* status);
void OnIprobe(CallScope& scope, int rc, int source, int tag, MPI_Comm comm, int* flag,
              MPI_Status* status);

// Matched probes and receives.
void OnMprobe(CallScope& scope, int rc, int source, int tag, MPI_Comm comm, MPI_Message* message,
              MPI_Status* status);
void OnImprobe(CallScope& scope, int rc, int source, int tag, MPI_Comm comm, int* flag,
               MPI_Message* message, MPI_Status* status);
void OnMrecv(CallScope& scope, int rc, void* buf, int count, MPI_Datatype datatype,
             MPI_Message* message, MPI_Status* status);
void OnImrecv(CallScope& scope, int rc, void* buf, int count, MPI_Datatype datatype,
              MPI_Message* message, MPI_Request* request);
void TakeMessage(MPI_Message message);  // moves it to Runtime::pending_message
template <class... Rest>
inline void PreMatched(CallScope&, void*, int, MPI_Datatype, MPI_Message* message, Rest...) {
  TakeMessage(message != nullptr ? *message : MPI_MESSAGE_NULL);
}

// Completions. The pre hooks capture the (non-null) requests passed.
void CaptureRequests(int count, const MPI_Request* requests);
template <class... Rest>
inline void PreWait(CallScope&, MPI_Request* request, Rest...) {
  CaptureRequests(1, request);
}
template <class... Rest>
inline void PreRequests(CallScope&, int count, MPI_Request* requests, Rest...) {
  CaptureRequests(count, requests);
}
template <class... Rest>
inline void PreRequests(CallScope&, EventKind, int count, MPI_Request* requests, Rest...) {
  CaptureRequests(count, requests);
}
void OnWait(CallScope& scope, int rc, MPI_Request* request, MPI_Status* status);
void OnTest(CallScope& scope, int rc, MPI_Request* request, int* flag, MPI_Status* status);
void OnWaitall(CallScope& scope, int rc, int count, MPI_Request* requests, MPI_Status* statuses);
void OnTestall(CallScope& scope, int rc, int count, MPI_Request* requests, int* flag,
               MPI_Status* statuses);
void OnWaitany(CallScope& scope, int rc, int count, MPI_Request* requests, int* index,
               MPI_Status* status);
void OnTestany(CallScope& scope, int rc, int count, MPI_Request* requests, int* index, int* flag,
               MPI_Status* status);
void OnWaitsome(CallScope& scope, EventKind kind, int rc, int incount, MPI_Request* requests,
                int* outcount, int* indices, MPI_Status* statuses);

// Collectives.
void OnBarrier(CallScope& scope, int rc, MPI_Comm comm);
void OnBcast(CallScope& scope, int rc, void* buffer, int count, MPI_Datatype datatype, int root,
             MPI_Comm comm);
void OnGather(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
              void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
void OnGatherv(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
               int root, MPI_Comm comm);
void OnScatter(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
void OnScatterv(CallScope& scope, int rc, const void* sendbuf, const int* sendcounts,
                const int* displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm);
void OnAllgather(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm);
void OnAllgatherv(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* displs,
                  MPI_Datatype recvtype, MPI_Comm comm);
void OnAlltoall(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
void OnAlltoallv(CallScope& scope, int rc, const void* sendbuf, const int* sendcounts,
                 const int* sdispls, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                 const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm);
void OnReduce(CallScope& scope, int rc, const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
void OnAllreduce(CallScope& scope, EventKind kind, int rc, const void* sendbuf, void* recvbuf,
                 int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
void OnReduceScatter(CallScope& scope, int rc, const void* sendbuf, void* recvbuf,
                     const int* recvcounts, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
void OnReduceScatterBlock(CallScope& scope, int rc, const void* sendbuf, void* recvbuf,
                          int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

// Neighbourhood collectives on a communicator with a topology (cartesian, graph,
// distributed graph), recorded as the standard defines them: an irecv from each source and
// an isend to each destination, in the topology's neighbour order, with tag kNeighborTag,
// then one waitall of them all. MPI_PROC_NULL neighbours (a non-periodic edge) move nothing.
// So a halo exchanged by MPI_Neighbor_alltoall is analyzed, modelled and simulated as the
// same exchange written with isend/irecv.
void OnNeighborAllgather(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm);
void OnNeighborAllgatherv(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                          MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                          const int* displs, MPI_Datatype recvtype, MPI_Comm comm);
void OnNeighborAlltoall(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                        MPI_Comm comm);
void OnNeighborAlltoallv(CallScope& scope, int rc, const void* sendbuf, const int* sendcounts,
                         const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                         const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                         MPI_Comm comm);
// The non-blocking ones: the blocking one's record, made where the call starts it (as the
// other non-blocking collectives; the collective's request completes nothing recorded).
void OnIneighborAllgather(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                          MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
void OnIneighborAllgatherv(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                           const int* displs, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* request);
void OnIneighborAlltoall(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request* request);
void OnIneighborAlltoallv(CallScope& scope, int rc, const void* sendbuf, const int* sendcounts,
                          const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                          const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request* request);

// Non-blocking collectives: the blocking collective's record, made when the call starts it
// (the request is not a point-to-point request: completions list nothing for it).
void OnIbarrier(CallScope& scope, int rc, MPI_Comm comm, MPI_Request* request);
void OnIbcast(CallScope& scope, int rc, void* buffer, int count, MPI_Datatype datatype, int root,
              MPI_Comm comm, MPI_Request* request);
void OnIgather(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
               MPI_Request* request);
void OnIgatherv(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                int root, MPI_Comm comm, MPI_Request* request);
void OnIscatter(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request);
void OnIscatterv(CallScope& scope, int rc, const void* sendbuf, const int* sendcounts,
                 const int* displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request);
void OnIallgather(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm, MPI_Request* request);
void OnIallgatherv(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* displs,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
void OnIalltoall(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Request* request);
void OnIalltoallv(CallScope& scope, int rc, const void* sendbuf, const int* sendcounts,
                  const int* sdispls, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                  const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
void OnIreduce(CallScope& scope, int rc, const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request);
void OnIallreduce(CallScope& scope, EventKind kind, int rc, const void* sendbuf, void* recvbuf,
                  int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request);
void OnIreduceScatter(CallScope& scope, int rc, const void* sendbuf, void* recvbuf,
                      const int* recvcounts, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                      MPI_Request* request);
void OnIreduceScatterBlock(CallScope& scope, int rc, const void* sendbuf, void* recvbuf,
                           int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                           MPI_Request* request);

// Communicators.
void OnCommDup(CallScope& scope, int rc, MPI_Comm comm, MPI_Comm* newcomm);
void OnCommSplit(CallScope& scope, int rc, MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
void OnCommSplitType(CallScope& scope, int rc, MPI_Comm comm, int split_type, int key,
                     MPI_Info info, MPI_Comm* newcomm);
void OnCommCreate(CallScope& scope, int rc, MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm);
// Collective over `group` only: named from (parent, tag, members, how many such calls came
// before), which all members agree on without the rest of the parent.
void OnCommCreateGroup(CallScope& scope, int rc, MPI_Comm comm, MPI_Group group, int tag,
                       MPI_Comm* newcomm);
void OnCartCreate(CallScope& scope, int rc, MPI_Comm comm_old, int ndims, const int* dims,
                  const int* periods, int reorder, MPI_Comm* comm_cart);
void OnCartSub(CallScope& scope, int rc, MPI_Comm comm, const int* remain_dims, MPI_Comm* newcomm);
void PreCommFree(CallScope& scope, MPI_Comm* comm);
void OnCommFree(CallScope& scope, int rc, MPI_Comm* comm);

}  // namespace pas2p::tracer
