; pas2p study input (bench/meep_study.sh): a 2-D dielectric waveguide (Ez, TM) in
; vacuum with PML: a 16 x 16 cell at resolution 30 (480 x 480 pixels), a continuous
; source, 1000 time steps (dt = 0.5 / 30), no field output, no progress printing.
(quiet true)
(set! progress-interval 1e9)
(set! geometry-lattice (make lattice (size 16 16 no-size)))
(set! geometry (list (make block (center 0 0) (size infinity 1 infinity)
                      (material (make dielectric (epsilon 12))))))
(set! sources (list (make source (src (make continuous-src (frequency 0.15)))
                      (component Ez) (center -7 0))))
(set! pml-layers (list (make pml (thickness 1.0))))
(set! resolution 30)
(set! eps-averaging? false)
(run-until (/ 1000 60.0))
