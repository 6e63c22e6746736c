// gz_physics_check: an exported world's physics as Gazebo Fortress runs it (ignition-physics 5, DART plugin).
//
// WHY: the scenes' SDF worlds (step_planner/execution/gazebo/world_sdf.py) pass the SDF checker, but whether
// Gazebo's physics keeps them still (objects resting, drawers closed) and lets a drawer slide its travel is a
// property of the physics engine. This program builds each world the way gz-sim Fortress's Physics system does
// and prints what happens as one JSON object per line; test/test_gazebo_physics.py asserts on those figures.
//
// Construction reproduces gz-sim ign-gazebo6 (commit aab5556f) src/systems/physics/Physics.cc, which does not hand
// the whole sdf::World to the engine but rebuilds each entity from its ECM components:
//   - the engine: the first plugin of libignition-physics-dartsim-plugin.so (the default, .cc:727-729) in
//     IGNITION_PHYSICS_ENGINE_INSTALL_DIR (.cc:756) that offers MinimumFeatureList (.cc:161-171, 775-821);
//   - the world: ConstructWorld(sdf::World) with only name and gravity (.cc:904-909);
//   - each model: ConstructModel(sdf::Model) with name, pose, static and self_collide, no links (.cc:992-1038);
//   - each link: ConstructLink(sdf::Link) with name, pose, inertial (.cc:1146-1172; a link's
//     <gravity> is not in sdformat 12's DOM, and our worlds do not disable it);
//   - each collision: ConstructCollision of the collision DOM with its pose resolved to the link (.cc:1223-1225,
//     1389);
//   - each joint: ConstructJoint(sdf::Joint) with name, type, pose, thread pitch, parent, child and the axes with
//     xyz resolved (.cc:1493-1515; the components from src/SdfEntityCreator.cc:111-143, 684-711);
//   - a step: ForwardStep with the step size as the input's duration (.cc:2430-2446), the world's
//     <max_step_size> (gz-sim's dt);
//   - a joint velocity command: SetVelocityCommand each step (.cc:2030-2033; the dartsim plugin's SERVO actuator,
//     gz-physics ignition-physics5_5.1.0 dartsim/src/JointFeatures.cc:147-185), a force command SetForce each
//     step (.cc:1976-1992, JointFeatures.cc:124-144); the plugin's step is DART's World::step() (SimulationFeatures.cc:69),
//     which zeroes joint commands after each step (dart/simulation/World.hpp:216-219), so gz-sim, and this
//     checker, set them again before every step.
//
// Usage: gz_physics_check WORLD.sdf [--seconds S] [--speed V] [--force F]
// Output (stdout, one JSON object per line):
//   {"kind":"object", ...}  every free model (not static, no joints): start and end position, displacement, and the
//                           lowest point of its collision shapes at start and end, after S seconds untouched;
//   {"kind":"fixture", ...} every link of a model with joints, its displacement after S seconds untouched;
//   {"kind":"joint_rest", ...}   every prismatic joint's position at start and after S seconds untouched;
//   {"kind":"joint_drive", ...}  every prismatic joint driven, all at once in a fresh world after 1 s of settling,
//                           by force F, by velocity V and at its limits (see Drive); positions reached.
// Exit code 0 when the world was built and stepped; the verdicts are the test's.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <ignition/math/Pose3.hh>
#include <ignition/math/eigen3/Conversions.hh>
#include <ignition/physics/ForwardStep.hh>
#include <ignition/physics/FrameSemantics.hh>
#include <ignition/physics/FreeGroup.hh>
#include <ignition/physics/Joint.hh>
#include <ignition/physics/RemoveEntities.hh>
#include <ignition/physics/RequestEngine.hh>
#include <ignition/physics/config.hh>
#include <ignition/physics/sdf/ConstructCollision.hh>
#include <ignition/physics/sdf/ConstructJoint.hh>
#include <ignition/physics/sdf/ConstructLink.hh>
#include <ignition/physics/sdf/ConstructModel.hh>
#include <ignition/physics/sdf/ConstructWorld.hh>
#include <ignition/plugin/Loader.hh>
#include <sdf/Collision.hh>
#include <sdf/Geometry.hh>
#include <sdf/Box.hh>
#include <sdf/Cylinder.hh>
#include <sdf/Joint.hh>
#include <sdf/JointAxis.hh>
#include <sdf/Link.hh>
#include <sdf/Model.hh>
#include <sdf/Physics.hh>
#include <sdf/Root.hh>
#include <sdf/World.hh>

namespace physics = ignition::physics;
namespace math = ignition::math;

// gz-sim's MinimumFeatureList (Physics.cc:161-171) with the joint (.cc:440-445), collision (.cc:468-470) and
// joint velocity command (.cc:517-519) lists the checker uses.
struct Features : physics::FeatureList<
    physics::FindFreeGroupFeature,
    physics::SetFreeGroupWorldPose,
    physics::FreeGroupFrameSemantics,
    physics::LinkFrameSemantics,
    physics::ForwardStep,
    physics::RemoveModelFromWorld,
    physics::sdf::ConstructSdfLink,
    physics::sdf::ConstructSdfModel,
    physics::sdf::ConstructSdfWorld,
    physics::GetBasicJointProperties,
    physics::GetBasicJointState,
    physics::SetBasicJointState,
    physics::sdf::ConstructSdfJoint,
    physics::sdf::ConstructSdfCollision,
    physics::SetJointVelocityCommandFeature> {};

using EnginePtr = physics::EnginePtr<physics::FeaturePolicy3d, Features>;
using WorldPtr = physics::WorldPtr<physics::FeaturePolicy3d, Features>;
using LinkPtr = physics::LinkPtr<physics::FeaturePolicy3d, Features>;
using JointPtr = physics::JointPtr<physics::FeaturePolicy3d, Features>;

[[noreturn]] static void Fail(const std::string &_msg)
{
  std::cerr << "gz_physics_check: " << _msg << std::endl;
  std::exit(2);
}

// gz-sim SdfEntityCreator.cc:111-121: resolve a pose to its relative_to frame, else the raw pose.
static math::Pose3d Resolve(const sdf::SemanticPose &_pose)
{
  math::Pose3d out;
  if (!_pose.Resolve(out).empty())
    out = _pose.RawPose();
  return out;
}

static EnginePtr LoadEngine()
{
  const std::string lib = std::string(IGNITION_PHYSICS_ENGINE_INSTALL_DIR) +
      "/libignition-physics-dartsim-plugin.so";
  static ignition::plugin::Loader loader;  // outlives the engine
  if (loader.LoadLib(lib).empty())
    Fail("cannot load " + lib);
  for (const auto &name : loader.PluginsImplementing<
         physics::ForwardStep::Implementation<physics::FeaturePolicy3d>>())
  {
    auto plugin = loader.Instantiate(name);
    if (!plugin)
      continue;
    if (auto engine = physics::RequestEngine3d<Features>::From(plugin))
      return engine;
  }
  Fail("no plugin in " + lib + " offers gz-sim's features");
}

struct Shape
{
  math::Pose3d pose;  // relative to the link
  bool box{true};
  math::Vector3d size;  // box: full size; cylinder: (radius, length, 0)
};

struct Body
{
  std::string model;
  std::string name;
  LinkPtr link;
  std::vector<Shape> shapes;
};

struct Slide
{
  std::string model;
  std::string name;
  JointPtr joint;
  double lower{0}, upper{0};
};

struct Scene
{
  WorldPtr world;
  std::vector<Body> objects;   // links of free models
  std::vector<Body> fixtures;  // links of models with joints
  std::vector<Slide> slides;
  std::chrono::steady_clock::duration dt;
};

// The world, entity by entity, as gz-sim's Physics::CreatePhysicsEntities builds it (Physics.cc:869-1512).
static Scene Build(const EnginePtr &_engine, const sdf::World &_sdf)
{
  Scene scene;
  double step = 0.001;
  if (const sdf::Physics *phys = _sdf.PhysicsDefault())
    step = phys->MaxStepSize();
  scene.dt = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(step));
  static int built = 0;  // one engine holds every world built here; dartsim finds links by world name
  sdf::World world;
  world.SetName(_sdf.Name() + "_" + std::to_string(built++));
  world.SetGravity(_sdf.Gravity());
  scene.world = _engine->ConstructWorld(world);
  for (uint64_t m = 0; m < _sdf.ModelCount(); ++m)
  {
    const sdf::Model *src = _sdf.ModelByIndex(m);
    if (src->ModelCount() > 0)
      Fail("model " + src->Name() + " has nested models; the checker does not build them");
    sdf::Model model;
    model.SetName(src->Name());
    model.SetRawPose(Resolve(src->SemanticPose()));
    model.SetStatic(src->Static());
    model.SetSelfCollide(src->SelfCollide());
    auto modelPtr = scene.world->ConstructModel(model);
    std::map<std::string, LinkPtr> links;
    for (uint64_t l = 0; l < src->LinkCount(); ++l)
    {
      const sdf::Link *srcLink = src->LinkByIndex(l);
      sdf::Link link;
      link.SetName(srcLink->Name());
      link.SetRawPose(Resolve(srcLink->SemanticPose()));
      link.SetInertial(srcLink->Inertial());
      Body body{src->Name(), srcLink->Name(), modelPtr->ConstructLink(link), {}};
      for (uint64_t c = 0; c < srcLink->CollisionCount(); ++c)
      {
        sdf::Collision collision = *srcLink->CollisionByIndex(c);
        const math::Pose3d pose = Resolve(collision.SemanticPose());
        collision.SetRawPose(pose);
        collision.SetPoseRelativeTo("");
        if (!body.link->ConstructCollision(collision))
          Fail("collision " + collision.Name() + " was not constructed");
        const sdf::Geometry *geom = collision.Geom();
        if (geom->Type() == sdf::GeometryType::BOX)
          body.shapes.push_back({pose, true, geom->BoxShape()->Size()});
        else if (geom->Type() == sdf::GeometryType::CYLINDER)
          body.shapes.push_back({pose, false, {geom->CylinderShape()->Radius(),
                                               geom->CylinderShape()->Length(), 0}});
        else
          Fail("collision " + collision.Name() + ": only boxes and cylinders are measured");
      }
      links[srcLink->Name()] = body.link;
      if (!src->Static())
        (src->JointCount() == 0 ? scene.objects : scene.fixtures).push_back(body);
    }
    for (uint64_t j = 0; j < src->JointCount(); ++j)
    {
      const sdf::Joint *srcJoint = src->JointByIndex(j);
      sdf::Joint joint;
      joint.SetName(srcJoint->Name());
      joint.SetType(srcJoint->Type());
      joint.SetRawPose(Resolve(srcJoint->SemanticPose()));
      joint.SetThreadPitch(srcJoint->ThreadPitch());
      joint.SetParentLinkName(srcJoint->ParentLinkName());
      joint.SetChildLinkName(srcJoint->ChildLinkName());
      for (unsigned int a = 0; a < 2; ++a)
      {
        if (const sdf::JointAxis *srcAxis = srcJoint->Axis(a))
        {
          math::Vector3d xyz;
          if (!srcAxis->ResolveXyz(xyz).empty())
            Fail("joint " + srcJoint->Name() + ": axis not resolved");
          sdf::JointAxis axis = *srcAxis;
          if (!axis.SetXyz(xyz).empty())
            Fail("joint " + srcJoint->Name() + ": axis not set");
          axis.SetXyzExpressedIn("");
          joint.SetAxis(a, axis);
        }
      }
      auto jointPtr = modelPtr->ConstructJoint(joint);
      if (!jointPtr)
        Fail("joint " + srcJoint->Name() + " was not constructed");
      if (srcJoint->Type() == sdf::JointType::PRISMATIC)
        scene.slides.push_back({src->Name(), srcJoint->Name(), jointPtr, srcJoint->Axis(0)->Lower(),
                                srcJoint->Axis(0)->Upper()});
    }
  }
  return scene;
}

static math::Pose3d WorldPose(const LinkPtr &_link)
{
  return math::eigen3::convert(_link->FrameDataRelativeToWorld().pose);
}

// The lowest point of a body's collision shapes at the link pose.
static double Lowest(const Body &_body, const math::Pose3d &_linkPose)
{
  double low = INFINITY;
  for (const Shape &s : _body.shapes)
  {
    const math::Pose3d p = _linkPose * s.pose;  // shape in the world: link pose then shape pose
    if (s.box)
    {
      for (int i = 0; i < 8; ++i)
      {
        const math::Vector3d corner((i & 1 ? 0.5 : -0.5) * s.size.X(), (i & 2 ? 0.5 : -0.5) * s.size.Y(),
                                    (i & 4 ? 0.5 : -0.5) * s.size.Z());
        low = std::min(low, p.Pos().Z() + p.Rot().RotateVector(corner).Z());
      }
    }
    else
    {
      const double az = std::abs(p.Rot().RotateVector(math::Vector3d::UnitZ).Z());
      low = std::min(low, p.Pos().Z() - 0.5 * s.size.Y() * az -
                              s.size.X() * std::sqrt(std::max(0.0, 1.0 - az * az)));
    }
  }
  return low;
}

static void Step(Scene &_scene, int _steps,
                 const std::function<void()> &_command = [] {})
{
  physics::ForwardStep::Input input;
  physics::ForwardStep::State state;
  physics::ForwardStep::Output output;
  input.Get<std::chrono::steady_clock::duration>() = _scene.dt;
  for (int i = 0; i < _steps; ++i)
  {
    _command();
    _scene.world->Step(output, state, input);
  }
}

static std::string Vec(const math::Vector3d &_v)
{
  std::ostringstream out;
  out.precision(9);
  out << "[" << _v.X() << "," << _v.Y() << "," << _v.Z() << "]";
  return out.str();
}

static std::string Num(double _v)
{
  std::ostringstream out;
  out.precision(9);
  out << _v;
  return out.str();
}

static int StepsFor(const Scene &_scene, double _seconds)
{
  return static_cast<int>(std::lround(_seconds / std::chrono::duration<double>(_scene.dt).count()));
}

// Untouched for _seconds: objects, fixtures and drawer joints, start against end.
static void Rest(const EnginePtr &_engine, const sdf::World &_sdf, double _seconds)
{
  Scene scene = Build(_engine, _sdf);
  std::vector<math::Pose3d> objects0, fixtures0;
  std::vector<double> joints0;
  for (const Body &b : scene.objects)
    objects0.push_back(WorldPose(b.link));
  for (const Body &b : scene.fixtures)
    fixtures0.push_back(WorldPose(b.link));
  for (const Slide &s : scene.slides)
    joints0.push_back(s.joint->GetPosition(0));
  Step(scene, StepsFor(scene, _seconds));
  for (std::size_t i = 0; i < scene.objects.size(); ++i)
  {
    const Body &b = scene.objects[i];
    const math::Pose3d end = WorldPose(b.link);
    std::cout << "{\"kind\":\"object\",\"world\":\"" << _sdf.Name() << "\",\"model\":\"" << b.model
              << "\",\"seconds\":" << Num(_seconds) << ",\"start\":" << Vec(objects0[i].Pos())
              << ",\"end\":" << Vec(end.Pos())
              << ",\"displacement\":" << Num((end.Pos() - objects0[i].Pos()).Length())
              << ",\"lowest_start\":" << Num(Lowest(b, objects0[i]))
              << ",\"lowest_end\":" << Num(Lowest(b, end)) << "}\n";
  }
  for (std::size_t i = 0; i < scene.fixtures.size(); ++i)
  {
    const Body &b = scene.fixtures[i];
    const math::Pose3d end = WorldPose(b.link);
    std::cout << "{\"kind\":\"fixture\",\"world\":\"" << _sdf.Name() << "\",\"model\":\"" << b.model
              << "\",\"link\":\"" << b.name << "\",\"seconds\":" << Num(_seconds)
              << ",\"displacement\":" << Num((end.Pos() - fixtures0[i].Pos()).Length()) << "}\n";
  }
  for (std::size_t i = 0; i < scene.slides.size(); ++i)
  {
    const Slide &s = scene.slides[i];
    std::cout << "{\"kind\":\"joint_rest\",\"world\":\"" << _sdf.Name() << "\",\"model\":\"" << s.model
              << "\",\"joint\":\"" << s.name << "\",\"seconds\":" << Num(_seconds)
              << ",\"lower\":" << Num(s.lower) << ",\"upper\":" << Num(s.upper)
              << ",\"start\":" << Num(joints0[i]) << ",\"end\":" << Num(s.joint->GetPosition(0)) << "}\n";
  }
}

struct Run
{
  double reached;  // position at the end of the segment
  double extreme;  // furthest position during it, in its direction
};

// One segment of a drawer's program: a command set again before every step for a duration, or none (settling).
struct Segment
{
  enum Kind { kNone, kForce, kVelocity } kind;
  double sign;   // +1 opens toward the upper limit, -1 closes
  double value;  // N or m/s
  // the duration, from the runs of the segments before it and the position the segment starts at
  std::function<double(const std::vector<Run> &, double)> seconds;
};

struct Program
{
  const Slide *slide;
  std::vector<Segment> segments;
  std::vector<Run> runs;       // one per ended segment
  std::vector<double> starts;  // the position each segment started at
  std::size_t current{0};
  int left{0};                 // steps left in the current segment
};

// Starts the program's next segment that has steps, recording the ones that have none.
static void Begin(const Scene &_scene, Program &_p)
{
  while (_p.current < _p.segments.size())
  {
    const double q = _p.slide->joint->GetPosition(0);
    _p.starts.push_back(q);
    _p.left = StepsFor(_scene, std::max(0.0, _p.segments[_p.current].seconds(_p.runs, q)));
    if (_p.left > 0)
    {
      _p.runs.push_back({q, q});  // updated as it runs
      return;
    }
    _p.runs.push_back({q, q});
    ++_p.current;
  }
}

// Every drawer's program at once in one world, each segment's command set before every step it lasts.
static void RunPrograms(Scene &_scene, std::vector<Program> &_programs)
{
  for (Program &p : _programs)
    Begin(_scene, p);
  auto active = [&] {
    for (const Program &p : _programs)
      if (p.current < p.segments.size())
        return true;
    return false;
  };
  while (active())
  {
    Step(_scene, 1, [&] {
      for (const Program &p : _programs)
      {
        if (p.current >= p.segments.size())
          continue;
        const Segment &g = p.segments[p.current];
        if (g.kind == Segment::kForce)
          p.slide->joint->SetForce(0, g.sign * g.value);
        else if (g.kind == Segment::kVelocity)
          p.slide->joint->SetVelocityCommand(0, g.sign * g.value);
      }
    });
    for (Program &p : _programs)
    {
      if (p.current >= p.segments.size())
        continue;
      const double q = p.slide->joint->GetPosition(0);
      Run &run = p.runs.back();
      run.reached = q;
      run.extreme = p.segments[p.current].sign > 0 ? std::max(run.extreme, q) : std::min(run.extreme, q);
      if (--p.left == 0)
      {
        ++p.current;
        Begin(_scene, p);
      }
    }
  }
}

// Every drawer driven in one fresh world (after 1 s settling), all at once, each through the same program of open
// and close (a robot serves a lower drawer under an open upper one, so neighbours moving together is a state the
// world must allow too):
//  - "force": SetForce of +F, then -F, each for travel / V seconds (F overcomes damping and friction well before),
//    into both limits;
//  - "velocity": forced to mid-travel, then SetVelocityCommand of +V up to kMargin short of the upper limit and of
//    -V down to kMargin short of the lower one. Short, because DART 6.12's servo cannot leave a position limit it
//    is at (dartsim/dart#1683, gz-sim#1684; fixed in DART 6.16 by dartsim/dart#2086 and #2421), and a closed
//    drawer rests at its lower limit;
//  - "servo_at_limit": that engine bug measured: SetVelocityCommand(+V) for 0.5 s from the closed limit (forced
//    closed first), then SetVelocityCommand(-V) for 0.5 s from the open limit (forced open first).
static constexpr double kMargin = 0.01;

static void Report(const sdf::World &_sdf, const Slide &_s, const char *_mode, double _value, double _start,
                   const Run &_open, const Run &_close)
{
  std::cout << "{\"kind\":\"joint_drive\",\"world\":\"" << _sdf.Name() << "\",\"model\":\"" << _s.model
            << "\",\"joint\":\"" << _s.name << "\",\"mode\":\"" << _mode << "\",\"command\":" << Num(_value)
            << ",\"lower\":" << Num(_s.lower) << ",\"upper\":" << Num(_s.upper) << ",\"start\":" << Num(_start)
            << ",\"opened\":" << Num(_open.reached) << ",\"max\":" << Num(_open.extreme)
            << ",\"closed\":" << Num(_close.reached) << ",\"min\":" << Num(_close.extreme) << "}\n";
}

static void Drive(const EnginePtr &_engine, const sdf::World &_sdf, double _speed, double _force)
{
  Scene scene = Build(_engine, _sdf);
  Step(scene, StepsFor(scene, 1.0));
  using K = Segment::Kind;
  auto fixed = [](double _s) { return [_s](const std::vector<Run> &, double) { return _s; }; };
  std::vector<Program> programs;
  for (const Slide &s : scene.slides)
  {
    const double pushS = (s.upper - s.lower) / _speed;
    const double upper = s.upper, lower = s.lower;
    programs.push_back({&s, {
        {K::kForce, +1, _force, fixed(pushS)},   // 0: force open
        {K::kForce, -1, _force, fixed(pushS)},   // 1: force closed
        {K::kForce, +1, _force, fixed(0.2)},     // 2: off the closed limit
        {K::kNone, 0, 0, fixed(0.2)},            // 3: settling
        {K::kVelocity, +1, _speed,               // 4: velocity open, up to kMargin short of the upper limit
         [=](const std::vector<Run> &, double _q) { return (upper - kMargin - _q) / _speed; }},
        {K::kVelocity, -1, _speed,               // 5: velocity closed, down to kMargin short of the lower one
         [=](const std::vector<Run> &_r, double) { return (_r[4].reached - lower - kMargin) / _speed; }},
        {K::kForce, -1, _force, fixed(pushS)},   // 6: closed: at the lower limit
        {K::kVelocity, +1, _speed, fixed(0.5)},  // 7: servo from the lower limit
        {K::kForce, +1, _force, fixed(pushS)},   // 8: open: at the upper limit
        {K::kVelocity, -1, _speed, fixed(0.5)},  // 9: servo from the upper limit
        {K::kForce, -1, _force, fixed(pushS)},   // 10: closed again
    }});
  }
  RunPrograms(scene, programs);
  for (const Program &p : programs)
  {
    Report(_sdf, *p.slide, "force", _force, p.starts[0], p.runs[0], p.runs[1]);
    Report(_sdf, *p.slide, "velocity", _speed, p.starts[4], p.runs[4], p.runs[5]);
    Report(_sdf, *p.slide, "servo_at_limit", _speed, p.starts[7], p.runs[7], p.runs[9]);
  }
}

int main(int argc, char **argv)
{
  if (argc < 2)
    Fail("usage: gz_physics_check WORLD.sdf [--seconds S] [--speed V] [--force F]");
  double seconds = 5.0, speed = 0.2, force = 5.0;
  for (int i = 2; i + 1 < argc; i += 2)
  {
    const std::string key = argv[i];
    const double value = std::atof(argv[i + 1]);
    if (!(value > 0))
      Fail(key + " must be positive");
    if (key == "--seconds")
      seconds = value;
    else if (key == "--speed")
      speed = value;
    else if (key == "--force")
      force = value;
    else
      Fail("unknown option " + key);
  }
  sdf::Root root;
  const sdf::Errors errors = root.Load(argv[1]);
  if (!errors.empty())
  {
    for (const auto &e : errors)
      std::cerr << e << std::endl;
    Fail(std::string("cannot load ") + argv[1]);
  }
  if (root.WorldCount() != 1)
    Fail("expected one world");
  const EnginePtr engine = LoadEngine();
  const sdf::World &world = *root.WorldByIndex(0);
  Rest(engine, world, seconds);
  Drive(engine, world, speed, force);
  return 0;
}
