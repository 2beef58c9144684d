"""API Priority and Fairness (``k8s.io/apiserver/pkg/util/flowcontrol``), one per worker.

Every request that is not long-running (a watch only while it starts) is classified by
the first FlowSchema that matches it (``matching``), lands in its priority level's queue
set (``fairqueuing``: shuffle sharding, fair queuing in virtual time, or Reject), takes
the seats the work estimator gives it (``estimate``: a LIST one per 100 objects) and
waits for them, or is refused with a 429. Levels lend and borrow seats every 10 seconds
according to their demand (``allocation``, ``controller``). The objects come from the
store, kept by the config producer (the flowcontrol plugin's bootstrap) and read by the
config consumer (``config``).

Design note: how the workers share the seats
--------------------------------------------

kapiserver runs several gunicorn workers, each a process with its own interpreter, and
a request runs in the worker whose connection it came on. **Each worker holds a fixed
share of every level's seats**: it runs upstream's whole algorithm with the server's
concurrency limit (``--max-requests-inflight`` + ``--max-mutating-requests-inflight``)
divided by the number of workers, rounded up. Reasons:

* A seat stands for capacity to execute, and a worker's capacity is its own: one
  interpreter, one core at a time. A request queued in worker A cannot run on a seat
  that is free in worker B, so a shared seat count would let A take seats B's CPU backs
  and run more at once than A can serve, which is exactly the slowing-down for everyone
  that APF exists to prevent.
* Queuing is local anyway: a waiting request is a greenlet of the worker holding its
  connection, and fair queuing orders one set of queues. With shared seats every
  worker would have to learn at once that a seat freed elsewhere (cross-process
  wake-ups on every release), and the order between workers would no longer be fair.
* It costs nothing on the request path: no shared memory, no lock, no system call.
  kube-apiserver replicas behind a load balancer divide a cluster's capacity the same way.

The price is that a worker whose share of a level is used up queues (or, for a Reject
level, refuses) while another worker may have free seats at that level. Queuing absorbs
most of it, since gunicorn's workers accept connections as they have time to, and
borrowing between levels runs in each worker on its own demand. Metrics sum the
workers' values (a level's limits in ``apiserver_flowcontrol_*_limit_seats`` add up to
the server's, within rounding) and ``dump_priority_levels`` shows the whole server's
counts; ``dump_queues`` and ``dump_requests`` show the queues of the worker that answers
(each worker has its own).

With ``--enable-priority-and-fairness=false`` the max-in-flight filter applies instead,
and its limits are counted across workers (``kapiserver.server.inflight``): a request it
turns away is refused, not queued, so there one busy worker must not refuse while
another idles.
"""

from .controller import Admission, FlowControl
from .fairqueuing import WorkEstimate

__all__ = ["Admission", "FlowControl", "WorkEstimate"]
