"""`evaluate --ray`: the driver's scheduler (`driver`), joining the cluster (`join`), what runs
in a worker (`actor`) and the models split between the driver and its workers (`remote`).
Ray itself is imported only in this room, and only when a run asks for it."""
